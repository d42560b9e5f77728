package sqlstore

import (
	"fmt"
	"time"
)

// timeDest scans a timestamp column into a time.Time in UTC, whichever way
// the dialect keeps it: PostgreSQL's timestamptz arrives as time.Time,
// SQLite's INTEGER Unix microseconds as int64.
type timeDest struct{ t *time.Time }

func (d timeDest) Scan(src any) error {
	t, ok, err := scanTime(src)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("timestamp: unexpected NULL")
	}
	*d.t = t
	return nil
}

// nullTimeDest scans a nullable timestamp column into a *time.Time.
type nullTimeDest struct{ t **time.Time }

func (d nullTimeDest) Scan(src any) error {
	t, ok, err := scanTime(src)
	if err != nil || !ok {
		*d.t = nil
		return err
	}
	*d.t = &t
	return nil
}

// scanTime reports false for NULL.
func scanTime(src any) (time.Time, bool, error) {
	switch v := src.(type) {
	case nil:
		return time.Time{}, false, nil
	case time.Time:
		return v.UTC(), true, nil
	case int64:
		return time.UnixMicro(v).UTC(), true, nil
	default:
		return time.Time{}, false, fmt.Errorf("timestamp: cannot scan %T", src)
	}
}

// nullStringDest scans a nullable text column into a *string without the
// reflection database/sql uses for pointer-to-pointer destinations.
type nullStringDest struct{ s **string }

func (d nullStringDest) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*d.s = nil
	case string:
		*d.s = &v
	case []byte:
		s := string(v)
		*d.s = &s
	default:
		return fmt.Errorf("text: cannot scan %T", src)
	}
	return nil
}
