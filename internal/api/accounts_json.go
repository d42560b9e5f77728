package api

import (
	"strconv"
	"time"
	"unicode/utf8"
)

// appendAccount appends the JSON of one account. GET /accounts/get is the
// hottest read of the API and reflection-based encoding was a tenth of its
// CPU; TestAppendAccountMatchesEncodingJSON and FuzzAppendJSONString hold
// this encoder to encoding/json's output.
func appendAccount(b []byte, a *accountJSON) []byte {
	b = append(b, `{"merchant":{"id":`...)
	b = strconv.AppendInt(b, a.Merchant.ID, 10)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, a.Merchant.Name)
	b = append(b, `,"logo":`...)
	b = appendJSONString(b, a.Merchant.Logo)
	b = append(b, `},"connection":{"status":`...)
	b = appendJSONString(b, a.Connection.Status)
	b = append(b, `,"scopes":[`...)
	for i, sc := range a.Connection.Scopes {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":`...)
		b = appendJSONString(b, sc.Type)
		b = append(b, '}')
	}
	b = append(b, `]},"lifecycle":{"status":`...)
	b = appendNullableString(b, a.Lifecycle.Status)
	b = append(b, `},"last_user_action":{"attempted_at":`...)
	if t := a.LastUserAction.AttemptedAt; t != nil {
		b = append(b, '"')
		b = t.AppendFormat(b, time.RFC3339Nano)
		b = append(b, '"')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"status":`...)
	b = appendNullableString(b, a.LastUserAction.Status)
	return append(b, "}}"...)
}

// appendAccounts appends a JSON array of accounts.
func appendAccounts(b []byte, accounts []accountJSON) []byte {
	b = append(b, '[')
	for i := range accounts {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendAccount(b, &accounts[i])
	}
	return append(b, ']')
}

func appendNullableString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendJSONString(b, *s)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string exactly as encoding/json
// does: HTML-sensitive characters, control characters, U+2028 and U+2029
// escaped; invalid UTF-8 replaced by U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
