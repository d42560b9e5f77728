// Package jsonscan reads the tokens of JSON text that encoding/json's Valid
// has accepted, as json.Decoder's Token and More do, at a fraction of their
// cost: the API walks request bodies token by token to hold them to rules
// encoding/json does not (exact key case, no duplicate keys), and through
// json.Decoder that walk cost as much as decoding the body.
//
// Because the text is known to be valid, a Scanner checks nothing: it skips
// white space, commas and colons between tokens, and reads each token from
// its first byte. On text that is not valid its tokens are undefined; use
// json.Decoder there, whose errors say what is wrong.
package jsonscan

import (
	"encoding/json"
	"io"
	"unicode/utf8"
)

// Scanner returns the tokens of one valid JSON text.
type Scanner struct {
	data []byte
	pos  int
}

// New returns a Scanner of data, which json.Valid must accept.
func New(data []byte) *Scanner { return &Scanner{data: data} }

// Token returns the next token, as json.Decoder's Token does: a json.Delim
// for { } [ ], a string, a bool, nil for null, and a json.Number for a
// number (as with the Decoder's UseNumber). After the last token it
// returns io.EOF.
func (s *Scanner) Token() (json.Token, error) {
	s.skip()
	if s.pos >= len(s.data) {
		return nil, io.EOF
	}
	switch c := s.data[s.pos]; c {
	case '{', '}', '[', ']':
		s.pos++
		return json.Delim(c), nil
	case '"':
		return s.string()
	case 't':
		s.pos += len("true")
		return true, nil
	case 'f':
		s.pos += len("false")
		return false, nil
	case 'n':
		s.pos += len("null")
		return nil, nil
	default:
		start := s.pos
		for s.pos < len(s.data) && isNumberByte(s.data[s.pos]) {
			s.pos++
		}
		return json.Number(s.data[start:s.pos]), nil
	}
}

// More reports whether the current array or object has another element.
func (s *Scanner) More() bool {
	s.skip()
	return s.pos < len(s.data) && s.data[s.pos] != ']' && s.data[s.pos] != '}'
}

// skip moves past white space and the separators between tokens.
func (s *Scanner) skip() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r', ',', ':':
			s.pos++
		default:
			return
		}
	}
}

// string reads the string at pos, its opening quote.
func (s *Scanner) string() (json.Token, error) {
	start := s.pos
	escaped := false
	i := start + 1
	for ; i < len(s.data); i++ {
		if c := s.data[i]; c == '\\' {
			escaped = true
			i++ // the escaped byte, a quote perhaps
		} else if c == '"' {
			break
		}
	}
	s.pos = i + 1
	// json.Decoder unescapes, and replaces invalid UTF-8 with U+FFFD:
	// json.Unmarshal does both, for the rare string that needs it.
	if raw := s.data[start+1 : i]; !escaped && utf8.Valid(raw) {
		return string(raw), nil
	}
	var str string
	if err := json.Unmarshal(s.data[start:s.pos], &str); err != nil {
		return nil, err
	}
	return str, nil
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}
