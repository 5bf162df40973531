package ui

import (
	"math"
	"strconv"
	"testing"
)

// Colour-vision-deficiency simulations of Machado, Oliveira & Fernandes
// (IEEE TVCG 2009), severity 1, applied to linear sRGB.
var cvdMatrices = map[string][3][3]float64{
	"normal":       {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}},
	"protanopia":   {{0.152286, 1.052583, -0.204868}, {0.114503, 0.786281, 0.099216}, {-0.003882, -0.048116, 1.051998}},
	"deuteranopia": {{0.367322, 0.860646, -0.227968}, {0.280085, 0.672501, 0.047413}, {-0.011820, 0.042940, 0.968881}},
	"tritanopia":   {{1.255528, -0.076749, -0.178779}, {-0.078411, 0.930809, 0.147602}, {0.004733, 0.691367, 0.303900}},
}

// lab converts a "#rrggbb" colour, seen through the matrix m, to CIELAB (D65).
func lab(t *testing.T, hex string, m [3][3]float64) [3]float64 {
	var lin [3]float64
	for i := range lin {
		v, err := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		if err != nil {
			t.Fatalf("colour %q: %v", hex, err)
		}
		c := float64(v) / 255
		if c <= 0.04045 {
			lin[i] = c / 12.92
		} else {
			lin[i] = math.Pow((c+0.055)/1.055, 2.4)
		}
	}
	var s [3]float64
	for i := range s {
		s[i] = math.Min(1, math.Max(0, m[i][0]*lin[0]+m[i][1]*lin[1]+m[i][2]*lin[2]))
	}
	x := (0.4124*s[0] + 0.3576*s[1] + 0.1805*s[2]) / 0.95047
	y := 0.2126*s[0] + 0.7152*s[1] + 0.0722*s[2]
	z := (0.0193*s[0] + 0.1192*s[1] + 0.9505*s[2]) / 1.08883
	f := func(v float64) float64 {
		if v > 216.0/24389 {
			return math.Cbrt(v)
		}
		return (24389.0/27*v + 16) / 116
	}
	return [3]float64{116*f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))}
}

// TestMemoryPaletteColourBlindSafe checks that every two segments of the
// memory bar stay apart (CIELAB ΔE*76 >= 10, about four times a just
// noticeable difference) for normal vision and the three dichromacies.
func TestMemoryPaletteColourBlindSafe(t *testing.T) {
	for name, m := range cvdMatrices {
		for i := range memoryParts {
			for j := i + 1; j < len(memoryParts); j++ {
				a, b := lab(t, memoryParts[i].colour, m), lab(t, memoryParts[j].colour, m)
				d := math.Sqrt((a[0]-b[0])*(a[0]-b[0]) + (a[1]-b[1])*(a[1]-b[1]) + (a[2]-b[2])*(a[2]-b[2]))
				if d < 10 {
					t.Errorf("%s: %s %s and %s %s differ by ΔE %.1f < 10", name,
						memoryParts[i].name, memoryParts[i].colour, memoryParts[j].name, memoryParts[j].colour, d)
				}
			}
		}
	}
	// A failing palette fails: red and green are confused by deuteranopes.
	r, g := lab(t, "#FF0000", cvdMatrices["deuteranopia"]), lab(t, "#00B000", cvdMatrices["deuteranopia"])
	if d := math.Hypot(math.Hypot(r[0]-g[0], r[1]-g[1]), r[2]-g[2]); d >= 10 {
		t.Errorf("red/green under deuteranopia ΔE %.1f: the check would not catch a bad palette", d)
	}
}
