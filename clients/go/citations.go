package agenticdriver

import (
	"regexp"
	"strings"
)

// Citation grammar (the same in every client): every occurrence of the literal
// "[source:" opens a citation, which must continue with an ID and "]". ID has the wire's
// OpaqueKey syntax, [a-zA-Z0-9][a-zA-Z0-9._:-]{0,127}. Anything else after "[source:"
// (an empty or longer ID, a forbidden character, no "]") is a malformed citation.
const citationOpen = "[source:"

var citationID = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._:-]{0,127}$`)

// CheckCitations checks every [source:ID] reference in the result's text, then in each
// artifact's content, against result.Sources. It returns the cited source manifests in
// order of first citation; an unknown or malformed citation is an INVALID_CITATION
// *DriverError. It checks identity, never whether a source supports the text.
func CheckCitations(result *RunResult) ([]ContextManifest, error) {
	byID := map[string]ContextManifest{}
	for _, s := range result.Sources {
		byID[s.ID] = s
	}
	texts := []string{result.Text}
	for _, a := range result.Artifacts {
		texts = append(texts, a.Content)
	}
	seen := map[string]bool{}
	var cited []ContextManifest
	for _, text := range texts {
		ids, err := citedIDs(text)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			source, ok := byID[id]
			if !ok {
				return nil, newError(CodeInvalidCitation, "the result cites [source:%s], which is not one of its sources", id)
			}
			if !seen[id] {
				seen[id] = true
				cited = append(cited, source)
			}
		}
	}
	return cited, nil
}

// citedIDs returns the IDs cited in text, in order.
func citedIDs(text string) ([]string, error) {
	var ids []string
	offset := 0
	for {
		at := strings.Index(text[offset:], citationOpen)
		if at < 0 {
			return ids, nil
		}
		start := offset + at + len(citationOpen)
		id := ""
		if end := strings.IndexByte(text[start:], ']'); end >= 0 {
			id = text[start : start+end]
		}
		if !citationID.MatchString(id) {
			return nil, newError(CodeInvalidCitation, "malformed citation at offset %d: [source: must be followed by an id ([a-zA-Z0-9][a-zA-Z0-9._:-]{0,127}) and ]", offset+at)
		}
		ids = append(ids, id)
		offset = start
	}
}
