package audit

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
)

// AKS sends the audit log through a diagnostic setting, as the categories kube-audit (every
// request) and kube-audit-admin (without get and list): to a storage account or an event
// hub as resource log records, whose properties.log is the upstream Event as JSON text, or
// to a Log Analytics workspace, in the resource-specific tables AKSAudit and AKSAuditAdmin
// (one column per Event field) or the legacy AzureDiagnostics table (log_s).
// https://learn.microsoft.com/azure/aks/monitor-aks-reference
// https://learn.microsoft.com/azure/azure-monitor/platform/resource-logs
const (
	formatAKSDiagnostics      = "aks-diagnostics"
	formatAKSLogAnalytics     = "aks-log-analytics"
	formatAKSAzureDiagnostics = "aks-azure-diagnostics"
)

// auditCategory says a diagnostic category is the audit log; the others (kube-apiserver,
// guard, the controller manager…) are text or other events.
func auditCategory(c string) bool {
	return c == "kube-audit" || c == "kube-audit-admin"
}

// isAKSResourceLog: the resource log schema's resourceId, category and properties.
// https://learn.microsoft.com/azure/azure-monitor/platform/resource-logs-schema
func isAKSResourceLog(r object) bool {
	return r.is("resourceId", '"') && r.is("category", '"') && r.is("properties", '{')
}

func readAKSResourceLog(r object, emit func(*Event)) error {
	if !auditCategory(r.str("category")) {
		return nil
	}
	var props object
	if err := decode(r["properties"], &props); err != nil {
		return fmt.Errorf("properties: %w", err)
	}
	if !props.is("log", '"') {
		return errors.New("properties.log is not the audit event's text")
	}
	e, err := decodeEmbedded(props.str("log"))
	if err != nil {
		return fmt.Errorf("properties.log: %w", err)
	}
	emit(e)
	return nil
}

// aksAuditTables are the resource-specific tables of the audit categories.
var aksAuditTables = map[string]bool{"AKSAudit": true, "AKSAuditAdmin": true}

// isAKSAuditRow: a row of AKSAudit or AKSAuditAdmin names its table in Type, or, when a
// query projects Type away, has the columns AuditId and Verb, which no other shape here
// has (upstream's are auditID and verb).
// https://learn.microsoft.com/azure/azure-monitor/reference/tables/aksaudit
func isAKSAuditRow(r object) bool {
	if r.has("Type") {
		return aksAuditTables[r.str("Type")]
	}
	return r.has("AuditId", "Verb")
}

func readAKSAuditRow(r object, emit func(*Event)) error {
	e := &Event{
		Stage:     laString(r, "Stage"),
		Verb:      laString(r, "Verb"),
		UserAgent: laString(r, "UserAgent"),
	}
	for _, c := range []struct {
		column string
		into   any
	}{
		{"User", &e.User},
		{"SourceIps", &e.SourceIPs},
		{"ObjectRef", &e.ObjectRef},
		{"Annotations", &e.Annotations},
	} {
		if err := dynamic(r[c.column], c.into); err != nil {
			return fmt.Errorf("%s: %w", c.column, err)
		}
	}
	at := laString(r, "StageReceivedTime")
	if at == "" {
		at = laString(r, "TimeGenerated")
	}
	if at != "" {
		t, err := stageTime(at)
		if err != nil {
			return fmt.Errorf("StageReceivedTime is %w", err)
		}
		e.StageTimestamp = t
	}
	emit(e)
	return nil
}

// isAzureDiagnosticsRow: the legacy table's Category column and the log_s column AKS
// writes the event's text to.
// https://learn.microsoft.com/azure/azure-monitor/reference/tables/azurediagnostics
func isAzureDiagnosticsRow(r object) bool {
	return r.is("Category", '"') && r.has("log_s")
}

func readAzureDiagnosticsRow(r object, emit func(*Event)) error {
	if !auditCategory(r.str("Category")) {
		return nil
	}
	e, err := decodeEmbedded(r.str("log_s"))
	if err != nil {
		return fmt.Errorf("log_s: %w", err)
	}
	emit(e)
	return nil
}

// isLogAnalyticsResponse: the Log Analytics query API answers with tables of named columns
// and rows of values, which az monitor log-analytics query flattens into one object per
// row; a script or az rest keeps the answer as it is.
// https://learn.microsoft.com/azure/azure-monitor/logs/api/response-format
func isLogAnalyticsResponse(r object) bool {
	return r.is("tables", '[')
}

// rowShapes are the shapes a row of a query's answer can take.
var rowShapes = []shape{
	{formatAKSLogAnalytics, isAKSAuditRow, readAKSAuditRow},
	{formatAKSAzureDiagnostics, isAzureDiagnosticsRow, readAzureDiagnosticsRow},
}

func readLogAnalyticsResponse(r object, emit func(*Event)) error {
	// A non-fatal error in the query leaves its results partial: counting them would
	// understate the callers.
	if r.has("error") {
		return errors.New("the query answered with an error beside its tables, so its results are partial")
	}
	var tables []struct {
		Columns []struct {
			Name string `json:"name"`
		} `json:"columns"`
		Rows [][]jsontext.Value `json:"rows"`
	}
	if err := decode(r["tables"], &tables); err != nil {
		return fmt.Errorf("tables: %w", err)
	}
	var bad firstErr
	n := 0
	for t, table := range tables {
		for i, values := range table.Rows {
			n++
			if len(values) != len(table.Columns) {
				bad.add(fmt.Errorf("tables[%d].rows[%d] has %d values for %d columns", t, i, len(values), len(table.Columns)))
				continue
			}
			row := make(object, len(values))
			for c, v := range values {
				row[table.Columns[c].Name] = v
			}
			s := row.shape(rowShapes)
			if s == nil {
				bad.add(fmt.Errorf("tables[%d].rows[%d] is no AKSAudit, AKSAuditAdmin or AzureDiagnostics row: keep the AuditId and Verb columns", t, i))
				continue
			}
			if err := s.read(row, emit); err != nil {
				bad.add(fmt.Errorf("tables[%d].rows[%d]: %w", t, i, err))
			}
		}
	}
	return bad.result(n)
}

// laString is a string column. az monitor log-analytics query prints every value with
// Python's str(), so a null reads "None".
// https://github.com/Azure/azure-cli-extensions/blob/main/src/log-analytics/azext_loganalytics/custom.py
func laString(r object, column string) string {
	if s := r.str(column); s != "None" {
		return s
	}
	return ""
}

// dynamic decodes a dynamic column into v. The query API gives a dynamic value as JSON
// text inside a string, which az prints as it is ("" or "None" for an empty one); a value
// already decoded is taken as it is too.
func dynamic(raw []byte, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	if raw[0] == '"' {
		var text string
		if err := decode(raw, &text); err != nil {
			return err
		}
		if text == "" || text == "None" || text == "null" {
			return nil
		}
		raw = []byte(text)
	}
	return decode(raw, v)
}
