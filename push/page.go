package push

import "strconv"

// Page is one page of a list, newest first: at most the filter's Limit
// items, and Next, the cursor of the following page ("" on the last one).
// Pass Next as the filter's Cursor to read on; items made since the first
// page do not shift the pages that follow it.
type Page[T any] struct {
	Items []T
	Next  string
}

// Page sizes: a filter's Limit of 0 lists DefaultPageSize items, and no
// page holds more than MaxPageSize.
const (
	DefaultPageSize = 50
	MaxPageSize     = 500
)

// pageLimit checks a filter's limit and cursor and returns the page size.
// A cursor is the id of the last item of the page before (a decimal
// number, or a job id for jobs), as Page.Next gives it.
func pageLimit(limit int, cursor string) (int, error) {
	switch {
	case limit < 0:
		return 0, fieldErrorf(FieldLimit, "invalid_limit", "the limit %d is negative: give 1 to %d, or 0 for %d", limit, MaxPageSize, DefaultPageSize).with(strconv.Itoa(limit), MaxPageSize)
	case limit == 0:
		limit = DefaultPageSize
	case limit > MaxPageSize:
		return 0, fieldErrorf(FieldLimit, "invalid_limit", "the limit %d is more than %d items a page: give a smaller limit and read on with the cursor", limit, MaxPageSize).with(strconv.Itoa(limit), MaxPageSize)
	}
	if cursor != "" && CursorID(cursor) <= 0 {
		return 0, fieldErrorf(FieldCursor, "invalid_cursor", "the cursor %q is not one a page gave: pass a page's next cursor as it was, or none for the first page", truncate(cursor, 40)).with(truncate(cursor, 40), 0)
	}
	return limit, nil
}

// CursorID returns the id a list cursor of integer ids stands for: the
// items of the next page have smaller ids. It is 0 for no cursor, and
// negative for one that is not a cursor. Stores call it to read a filter's
// Cursor, which the engine has checked.
func CursorID(cursor string) int64 {
	if cursor == "" {
		return 0
	}
	id, err := strconv.ParseInt(cursor, 10, 64)
	if err != nil || id <= 0 {
		return -1
	}
	return id
}

// pageOf cuts a store's answer, read with one item more than limit, into a
// page: the extra item says that another page follows.
func pageOf[T any](items []T, limit int, id func(T) int64) Page[T] {
	if items == nil {
		items = []T{}
	}
	if len(items) <= limit {
		return Page[T]{Items: items}
	}
	items = items[:limit]
	return Page[T]{Items: items, Next: strconv.FormatInt(id(items[limit-1]), 10)}
}
