package webhook

import (
	"encoding/json"
	"testing"
)

// TestDeliveryArgsUnmarshal checks the hand-written decoder against
// encoding/json's reflective one on the same inputs.
func TestDeliveryArgsUnmarshal(t *testing.T) {
	type reflective DeliveryArgs // no UnmarshalJSON
	for _, in := range []string{
		`{"client_id":"cli_1","event_id":"0193a0c6-7a51-7c1e-9f00-1234567890ab","endpoint_id":"we_1"}`,
		`{"endpoint_id":"we_\u00e9\"x\\y","client_id":"cli_\n2","event_id":"e"}`,
		`{"client_id":"a","client_id":"b","other":{"client_id":"c"},"list":[1,"x"]}`,
		`{"client_id":null,"event_id":"e"}`,
		`{"client_id":"x","client_id":null}`,
		`{"Client_ID":"upper","EVENT_ID":"e"}`,
		`{}`,
		`null`,
		` { "event_id" : "spaced" } `,
	} {
		// Into a value already set, as encoding/json allows.
		got := DeliveryArgs{ClientID: "old", EventID: "old", EndpointID: "old"}
		if err := json.Unmarshal([]byte(in), &got); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		want := reflective{ClientID: "old", EventID: "old", EndpointID: "old"}
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatalf("%s: reflective: %v", in, err)
		}
		if got != DeliveryArgs(want) {
			t.Errorf("%s: got %+v, want %+v", in, got, want)
		}
	}

	// What River stores is what Insert marshalled.
	args := DeliveryArgs{ClientID: "cli_\u2028<&>", EventID: "0193a0c6-7a51-7c1e-9f00-1234567890ab", EndpointID: "we_\x01"}
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	var back DeliveryArgs
	if err := json.Unmarshal(b, &back); err != nil || back != args {
		t.Fatalf("round trip of %s: %+v, %v", b, back, err)
	}

	for _, in := range []string{`[]`, `"x"`, `{"client_id":1}`, `{"event_id":{}}`, `{"endpoint_id":true}`} {
		if err := json.Unmarshal([]byte(in), &back); err == nil {
			t.Errorf("%s: no error", in)
		}
	}
}

func BenchmarkDeliveryArgsUnmarshal(b *testing.B) {
	in := []byte(`{"client_id":"cli_5f3c2a1b9e8d7c6b","event_id":"0193a0c6-7a51-7c1e-9f00-1234567890ab","endpoint_id":"we_5f3c2a1b9e8d7c6b"}`)
	type reflective DeliveryArgs
	b.Run("gjson", func(b *testing.B) {
		for b.Loop() {
			var a DeliveryArgs
			if err := json.Unmarshal(in, &a); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reflect", func(b *testing.B) {
		for b.Loop() {
			var a reflective
			if err := json.Unmarshal(in, &a); err != nil {
				b.Fatal(err)
			}
		}
	})
}
