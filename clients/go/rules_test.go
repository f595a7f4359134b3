package agenticdriver

import (
	"os"
	"strings"
	"testing"
)

// The generated cross-field rules (generated/rules.json) evaluated by rules.go: the shared
// vectors of protocol/fixtures/rules.json (the TypeScript, Python and Rust clients answer
// them too), and a request rule refusing a body with the operation's code.

func TestRulesAnswerTheSharedVectors(t *testing.T) {
	data, err := os.ReadFile("../../protocol/fixtures/rules.json")
	if err != nil {
		t.Fatal(err)
	}
	document, err := parseJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	cases := document.(map[string]any)["cases"].([]any)
	if len(cases) < 30 {
		t.Fatalf("only %d vectors", len(cases))
	}
	for _, c := range cases {
		vector := c.(map[string]any)
		broken := evaluateRules(vector["ruleSet"].(string), vector["scope"].(map[string]any))
		want, _ := vector["broken"].(string)
		switch {
		case broken == nil && want != "":
			t.Errorf("%s: kept every rule, want %s broken", vector["name"], want)
		case broken != nil && (broken.rule != want || broken.at != vector["at"]):
			t.Errorf("%s: broke %s at %q, want %v at %v", vector["name"], broken.rule, broken.at, vector["broken"], vector["at"])
		}
	}
}

func TestRuleViolationWording(t *testing.T) {
	v := &ruleViolation{rule: "a.b", message: "it is wrong", at: "answer.hits[1]"}
	if got := v.Error(); got != "it is wrong (at answer.hits[1]) [a.b]" {
		t.Errorf("got %q", got)
	}
	if got := (&ruleViolation{rule: "a.b", message: "it is wrong"}).Error(); got != "it is wrong [a.b]" {
		t.Errorf("got %q", got)
	}
}

func TestRequestRulesRefuseWithTheOperationCode(t *testing.T) {
	client, hits := answer(t, "{}")
	req := RetrievalIndexRequest{Corpus: "docs", Source: ContextSource{ID: "guide", Revision: "1"},
		Chunks: []IndexChunk{{ID: "c1", Text: "a"}, {ID: "c1", Text: "b"}}}
	_, err := client.IndexSource(t.Context(), req)
	if !isCode(err, CodeInvalidRetrieval) || !strings.Contains(err.Error(), "[indexRequest.chunkIds]") {
		t.Errorf("duplicate chunk ids: %v", err)
	}
	if hits.Load() != 0 {
		t.Errorf("a request breaking its rules reached the host")
	}
}
