package request

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// FieldError is a request value that fails validation: Field names it in
// the request's JSON (e.g. "plan.nodes", "cluster.jobs[1].scale") and Msg
// says what is wrong with which value. The CLI maps Field to its flag, the
// HTTP API returns it as {"error", "field"}.
type FieldError struct {
	// Field is the JSON path of the bad value.
	Field string
	// Msg says what the value must be and what it was.
	Msg string
}

// Error returns "field: msg", or msg when no field is named.
func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

// nest puts a validation error of a nested value under prefix: a
// *FieldError's field becomes prefix.field.
func nest(prefix string, err error) error {
	var fe *FieldError
	if errors.As(err, &fe) {
		return &FieldError{Field: prefix + "." + fe.Field, Msg: fe.Msg}
	}
	return fmt.Errorf("%s: %w", prefix, err)
}

// fieldErr returns a *FieldError for field with a formatted message.
func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Field returns the field a validation error names, or "" when err is not
// (and wraps no) *FieldError.
func Field(err error) string {
	var fe *FieldError
	if errors.As(err, &fe) {
		return fe.Field
	}
	return ""
}

// MaxBodyBytes bounds the JSON of one plan or schedule request.
const MaxBodyBytes = 64 << 10

// decodeStrict decodes one JSON object of at most limit bytes into v,
// which holds the defaults: fields the object omits keep them. Unknown
// fields, trailing data and a null or non-object body are errors (a
// *FieldError with an empty Field: the body itself is wrong); a value of
// the wrong JSON type names its field, under prefix.
func decodeStrict(data []byte, limit int, prefix string, v any) error {
	if len(data) > limit {
		return &FieldError{Msg: fmt.Sprintf("the body is %d bytes, over the limit of %d bytes", len(data), limit)}
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return &FieldError{Msg: "the body must be a JSON object"}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return &FieldError{Field: strings.TrimPrefix(prefix+"."+te.Field, "."), Msg: fmt.Sprintf("must be a JSON %s, got a JSON %s", te.Type, te.Value)}
		}
		return &FieldError{Msg: "not a valid JSON request: " + clip(err.Error())}
	}
	if _, err := dec.Token(); err != io.EOF {
		return &FieldError{Msg: "trailing data after the JSON object"}
	}
	return nil
}

// maxMessageBytes bounds the part of an error message that can echo input.
const maxMessageBytes = 200

// clip shortens s to maxMessageBytes (on a rune boundary), so an error
// never echoes a large part of a request.
func clip(s string) string {
	if len(s) <= maxMessageBytes {
		return s
	}
	cut := maxMessageBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// group writes n with thousands separators ("65,536"), as error messages
// give numbers.
func group(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}
