package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"testing"
)

// trace is what a token reader gives, with More asked before each Token.
func trace(t testing.TB, more func() bool, token func() (json.Token, error)) []string {
	t.Helper()
	var out []string
	for range 10_000 {
		m := more()
		tok, err := token()
		if errors.Is(err, io.EOF) {
			return append(out, fmt.Sprintf("more=%v EOF", m))
		}
		if err != nil {
			t.Fatalf("token: %v", err)
		}
		out = append(out, fmt.Sprintf("more=%v %T %v", m, tok, tok))
	}
	t.Fatal("no end after 10,000 tokens")
	return nil
}

// check compares the Scanner with json.Decoder (UseNumber) on valid data.
func check(t testing.TB, data []byte) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	want := trace(t, dec.More, dec.Token)
	s := New(data)
	if got := trace(t, s.More, s.Token); !reflect.DeepEqual(got, want) {
		t.Fatalf("tokens of %q:\n got  %q\n want %q", data, got, want)
	}
}

var corpus = []string{
	`{}`, `[]`, `""`, `0`, `-1.5e+10`, `true`, `false`, `null`,
	`{"a": 1, "b": [true, false, null, {"c": "d"}], "e": {}}`,
	" \t\r\n{ \"jwe\" : \"eyJ.a.b.c.d\" , \"task_id\" : \"42\" } \n",
	`{"user": {"name": {"first_name": "Ada", "last_name": "Lovelace"}}, "card": {"number": "4242424242424242"}}`,
	`{"esc\"aped": "a\\b\"c\u00e9\ud83d\ude00\/", "k\u0041y": "\n"}`,
	`[[[]], [{}], [1, [2, [3]]], "]", "}", ":", ","]`,
	`{"a": [1, 2.5, -0, 1e3, 2E-2], "b": "x,y:z"}`,
}

func TestScannerMatchesDecoder(t *testing.T) {
	t.Parallel()
	for _, c := range corpus {
		if !json.Valid([]byte(c)) {
			t.Fatalf("corpus entry %q is not valid JSON", c)
		}
		check(t, []byte(c))
	}
}

func FuzzScannerMatchesDecoder(f *testing.F) {
	for _, c := range corpus {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if json.Valid(data) {
			check(t, data)
		}
	})
}
