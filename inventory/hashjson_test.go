package inventory

import "testing"

func TestHashJSONIgnoresOnlyTheTopLevelCollectionTime(t *testing.T) {
	base := `{"schemaVersion":1,"source":"cluster","collectedAt":"2026-11-30T12:00:00Z","apiUsage":[{"kind":"A"}]}`
	tests := []struct {
		name  string
		other string
		alike bool
	}{
		{"another collection time", `{"schemaVersion":1,"source":"cluster","collectedAt":"2026-12-01T08:30:00Z","apiUsage":[{"kind":"A"}]}`, true},
		{"the collection time's name escaped", `{"schemaVersion":1,"source":"cluster","collect\u0065dAt":"2026-12-01T08:30:00Z","apiUsage":[{"kind":"A"}]}`, true},
		{"another value before it", `{"schemaVersion":1,"source":"files","collectedAt":"2026-11-30T12:00:00Z","apiUsage":[{"kind":"A"}]}`, false},
		{"another value after it", `{"schemaVersion":1,"source":"cluster","collectedAt":"2026-11-30T12:00:00Z","apiUsage":[{"kind":"B"}]}`, false},
		{"a member moved across it", `{"schemaVersion":1,"collectedAt":"2026-11-30T12:00:00Z","source":"cluster","apiUsage":[{"kind":"A"}]}`, false},
		{"no collection time", `{"schemaVersion":1,"source":"cluster","apiUsage":[{"kind":"A"}]}`, false},
	}
	want, err := HashJSON([]byte(base))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := HashJSON([]byte(tt.other))
			if err != nil {
				t.Fatal(err)
			}
			if (got == want) != tt.alike {
				t.Errorf("hash %s vs %s: alike = %v, want %v", got, want, got == want, tt.alike)
			}
		})
	}
}

func TestHashJSONKeepsANestedCollectionTime(t *testing.T) {
	a, _ := HashJSON([]byte(`{"x":{"collectedAt":"1"},"collectedAt":"a"}`))
	b, _ := HashJSON([]byte(`{"x":{"collectedAt":"2"},"collectedAt":"a"}`))
	if a == b {
		t.Errorf("a nested collectedAt was left out of the hash")
	}
}

func TestHashJSONRefusesWhatIsNotAnObject(t *testing.T) {
	for _, doc := range []string{`[1]`, `"x"`, ``, `{"a":`} {
		if _, err := HashJSON([]byte(doc)); err == nil {
			t.Errorf("HashJSON(%q) = nil error, want one", doc)
		}
	}
}
