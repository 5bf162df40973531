package plan

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Limits of the URL fragment codec: a shared link longer than
// MaxFragmentChars, or one that inflates past MaxFragmentStateBytes, is
// rejected instead of being decoded.
const (
	MaxFragmentChars      = 64 << 10
	MaxFragmentStateBytes = 1 << 20
)

// fragmentPrefix marks version 1 of the fragment encoding:
// "v1." + base64url(deflate(JSON)).
const fragmentPrefix = "v1."

// EncodeFragment encodes a state value for a URL fragment (without '#'):
// versioned, compressed JSON that is safe in a URL.
func EncodeFragment(v any) (string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("fragment: %w", err)
	}
	var buf bytes.Buffer
	zw, err := flate.NewWriter(&buf, flate.BestCompression)
	if err != nil {
		return "", fmt.Errorf("fragment: %w", err)
	}
	if _, err := zw.Write(raw); err != nil {
		return "", fmt.Errorf("fragment: %w", err)
	}
	if err := zw.Close(); err != nil {
		return "", fmt.Errorf("fragment: %w", err)
	}
	s := fragmentPrefix + base64.RawURLEncoding.EncodeToString(buf.Bytes())
	if len(s) > MaxFragmentChars {
		return "", fmt.Errorf("fragment: encoded state is %d characters, over the %d limit", len(s), MaxFragmentChars)
	}
	return s, nil
}

// DecodeFragment decodes a fragment made by EncodeFragment into v (a
// pointer). A leading '#' is ignored. Unknown fields are rejected. Malformed,
// truncated, oversized or foreign fragments return an error that says which.
func DecodeFragment(s string, v any) error {
	s = strings.TrimPrefix(s, "#")
	if len(s) > MaxFragmentChars {
		return fmt.Errorf("fragment: %d characters is over the %d limit", len(s), MaxFragmentChars)
	}
	if !strings.HasPrefix(s, fragmentPrefix) {
		head := s
		if len(head) > 16 {
			head = head[:16] + "…"
		}
		return fmt.Errorf("fragment: unknown format %q (want %q followed by the encoded state)", head, fragmentPrefix)
	}
	packed, err := base64.RawURLEncoding.DecodeString(s[len(fragmentPrefix):])
	if err != nil {
		return fmt.Errorf("fragment: not base64url: %w", err)
	}
	zr := flate.NewReader(bytes.NewReader(packed))
	defer zr.Close()
	raw, err := io.ReadAll(io.LimitReader(zr, MaxFragmentStateBytes+1))
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("fragment: truncated (the link was cut short)")
		}
		return fmt.Errorf("fragment: corrupt compressed data: %w", err)
	}
	if len(raw) > MaxFragmentStateBytes {
		return fmt.Errorf("fragment: state inflates past %d bytes", MaxFragmentStateBytes)
	}
	if err := decodeStrict(bytes.NewReader(raw), v); err != nil {
		return fmt.Errorf("fragment: %w", err)
	}
	return nil
}
