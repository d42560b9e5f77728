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
	t, err := scanTime(src)
	if err != nil {
		return err
	}
	if t == nil {
		return fmt.Errorf("timestamp: unexpected NULL")
	}
	*d.t = *t
	return nil
}

// nullTimeDest scans a nullable timestamp column into a *time.Time.
type nullTimeDest struct{ t **time.Time }

func (d nullTimeDest) Scan(src any) error {
	t, err := scanTime(src)
	if err != nil {
		return err
	}
	*d.t = t
	return nil
}

func scanTime(src any) (*time.Time, error) {
	var t time.Time
	switch v := src.(type) {
	case nil:
		return nil, nil
	case time.Time:
		t = v.UTC()
	case int64:
		t = time.UnixMicro(v).UTC()
	default:
		return nil, fmt.Errorf("timestamp: cannot scan %T", src)
	}
	return &t, nil
}
