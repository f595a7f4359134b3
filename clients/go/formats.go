package agenticdriver

import (
	"regexp"
	"strconv"
)

var dateTimePattern = regexp.MustCompile(`^(\d{4})-(\d{2})-(\d{2})[Tt\s](\d{2}):(\d{2}):(\d{2}(?:\.\d+)?)(?:[Zz]|([+-])(\d{2})(?::?(\d{2}))?)$`)

// isDateTime accepts an RFC 3339 date-time with any offset and rejects impossible
// calendar dates and times (the JSON Schema "date-time" format as Ajv checks it).
func isDateTime(s string) bool {
	m := dateTimePattern.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	atoi := func(t string) int { n, _ := strconv.Atoi(t); return n }
	year, month, day := atoi(m[1]), atoi(m[2]), atoi(m[3])
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) {
		return false
	}
	hour, minute := atoi(m[4]), atoi(m[5])
	sec, _ := strconv.ParseFloat(m[6], 64)
	tzSign, tzHour, tzMinute := 1, atoi(m[8]), atoi(m[9])
	if m[7] == "-" {
		tzSign = -1
	}
	if tzHour > 23 || tzMinute > 59 {
		return false
	}
	if hour <= 23 && minute <= 59 && sec < 60 {
		return true
	}
	// A leap second is only valid at 23:59 UTC.
	utcMinute := minute - tzMinute*tzSign
	utcHour := hour - tzHour*tzSign
	if utcMinute < 0 {
		utcHour--
	}
	return (utcHour == 23 || utcHour == -1) && (utcMinute == 59 || utcMinute == -1) && sec < 61
}

func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

var uuidFormat = regexp.MustCompile(`^(?i:urn:uuid:)?[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$`)

func isUUID(s string) bool { return uuidFormat.MatchString(s) }
