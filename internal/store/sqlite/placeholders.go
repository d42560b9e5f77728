package sqlite

import (
	"strconv"
	"strings"
)

// anonymousPlaceholders returns query with its $1 … $N placeholders written
// as anonymous ?s when they appear once each and in order, and query
// unchanged otherwise.
//
// SQLite keeps numbered and named parameters in a list that
// sqlite3_bind_parameter_name searches from the start, and modernc asks for
// every parameter's name when binding, so binding N numbered parameters
// costs N²/2 steps: a 500-parameter batch insert spent more time there
// than in writing its rows. Anonymous parameters are not in the list.
//
// Placeholders inside string literals, quoted identifiers and comments are
// not placeholders and are left alone; a query with none of them, or with
// a placeholder used twice or out of order, is returned as it was.
func anonymousPlaceholders(query string) string {
	if !strings.Contains(query, "$") {
		return query
	}
	var out strings.Builder
	out.Grow(len(query))
	next := 1
	for i := 0; i < len(query); {
		switch c := query[i]; {
		case c == '\'' || c == '"' || c == '`':
			end := closing(query, i+1, c)
			out.WriteString(query[i:end])
			i = end
		case c == '-' && strings.HasPrefix(query[i:], "--"):
			end := strings.IndexByte(query[i:], '\n')
			if end < 0 {
				end = len(query) - i
			}
			out.WriteString(query[i : i+end])
			i += end
		case c == '/' && strings.HasPrefix(query[i:], "/*"):
			end := strings.Index(query[i+2:], "*/")
			if end < 0 {
				return query
			}
			out.WriteString(query[i : i+2+end+2])
			i += 2 + end + 2
		case c == ';':
			if strings.TrimSpace(query[i+1:]) != "" {
				// Several statements: SQLite numbers anonymous parameters
				// per statement, so they cannot stand for $N across them.
				return query
			}
			out.WriteByte(c)
			i++
		case c == '$':
			if i > 0 && isIdentByte(query[i-1]) {
				return query // a $ inside an identifier (SQLite allows it)
			}
			j := i + 1
			for j < len(query) && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			if j == i+1 || (j < len(query) && isIdentByte(query[j])) {
				return query // $name, or a $ this does not understand
			}
			if n, err := strconv.Atoi(query[i+1 : j]); err != nil || n != next {
				return query
			}
			next++
			out.WriteByte('?')
			i = j
		case c == '?' || c == '[':
			return query // other parameters, or a [quoted] identifier: left as written
		case (c == ':' || c == '@') && i+1 < len(query) && isIdentByte(query[i+1]):
			return query // a named parameter
		default:
			out.WriteByte(c)
			i++
		}
	}
	if next == 1 {
		return query
	}
	return out.String()
}

// closing returns the index just past the quote that closes the literal or
// identifier opened by q before start (a doubled quote is part of it), or
// len(s) when it is not closed.
func closing(s string, start int, q byte) int {
	for i := start; i < len(s); i++ {
		if s[i] == q {
			if i+1 < len(s) && s[i+1] == q {
				i++
				continue
			}
			return i + 1
		}
	}
	return len(s)
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}
