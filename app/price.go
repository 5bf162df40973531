package app

import (
	"fmt"

	"pipeplan/gpuprofiles"
)

// GPUPrice is the default price of one GPU-hour of a GPU (a gpus.json id):
// from the first of gpuprofiles' price lists that prices it, with the
// list's name and date; the Cost page shows the list's sources. ok is
// false when no list does.
func GPUPrice(gpuID string) (dollars float64, source string, ok bool) {
	for _, l := range gpuprofiles.PriceLists() {
		if p, found := l.DollarsPerGPUHour[gpuID]; found {
			return p, fmt.Sprintf("%s price list, %s (its sources on the Cost page)", l.Name, l.Date), true
		}
	}
	return 0, "", false
}

// PriceListByID returns the price list with that id (gpuprofiles/cloud.json).
func PriceListByID(id string) (gpuprofiles.PriceList, error) { return gpuprofiles.PriceListByID(id) }
