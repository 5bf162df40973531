package model_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"testing"

	"pipeplan/modelprofiles"
)

// statesDigests are SHA-256 digests of the JSON of every embedded graph's
// States (its augmented antichains, sums to the last bit, ancestors and
// parents) as the first implementation built them: a faster States must
// build the same states in the same order, bit for bit.
var statesDigests = map[string]string{
	"alexnet":       "efb7845e815545b5483fbb3ecae704b360a415b8c8f361ae0f51b8adfa6047c4",
	"vgg16":         "71191de17090872c2a69107e5a0c1375458e63cc330edf0a735c9ddf0a12fdd7",
	"resnet18":      "b0e5c3d92c2f4705985425735dfe25fb503425f79779877112f5c88dc18bab7d",
	"resnet18_copy": "c248a42ce531d8ffa0892cef8ad022b7f425a5f80e2e09dce179d4279d9f3873",
	"resnet50":      "1f53b261a38db2e1333e155adb41cea9671a8cd20026da41ca18240fd9d421d1",
	"resnet101":     "603eaef82bc7d8c5731b8f5555cab5420c12a376fe6cdf5c551ba603abb9b12f",
	"resnext50":     "9a5205da885cc2719b3d7e9958034f8780ac5179f8ab0ea8c05f7b4361f4f975",
	"resnext101":    "c45423205d4938d838419bc5e03d90448b8047755fabed0561a8e51d66d06f8b",
	"squeezenet1_0": "f635261d1150be842de7931696005e35c64aa4267a77f5f6c0211ee12c9c62c6",
	"densenet121":   "79135e2477a4c3db5ac2ee77adb2ecc24c0bc5d15be94f1f76b39ea9fbc00263",
	"gnmt":          "89704e3a21d4428bd7faca38a57545d0dde33f10e278d63ddca394bae1354229",
	"gnmt_large":    "ad46b345a4f2d0dd0edb69ebc711054108a2880af7e442d935f8b8bce06db985",
}

// TestStatesDigests checks every embedded graph's States against
// statesDigests.
func TestStatesDigests(t *testing.T) {
	for _, in := range modelprofiles.List() {
		if in.States == 0 {
			continue
		}
		s, err := embedded(t, in.Name).States()
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprintf("%x", sha256.Sum256(b))
		if want := statesDigests[in.Name]; got != want {
			t.Errorf("%s: States digest %s, want %s", in.Name, got, want)
		}
	}
}
