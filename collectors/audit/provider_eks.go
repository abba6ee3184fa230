package audit

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// EKS sends the audit log to CloudWatch Logs, log group /aws/eks/<cluster>/cluster, in
// streams named kube-apiserver-audit-<id>; each log event's message is the upstream Event
// as JSON text. The shapes below are how CloudWatch hands log events out.
// https://docs.aws.amazon.com/eks/latest/userguide/control-plane-logs.html
const (
	// formatCloudWatch is one log event of aws logs filter-log-events (FilteredLogEvent) or
	// get-log-events (OutputLogEvent).
	formatCloudWatch = "eks-cloudwatch"
	// formatCloudWatchSubscription is a subscription filter's payload, decompressed, as
	// Firehose writes it to S3 or a Lambda function receives it.
	formatCloudWatchSubscription = "eks-cloudwatch-subscription"
	// formatLogsInsights is aws logs get-query-results output.
	formatLogsInsights = "eks-logs-insights"
	// formatEKSInsight is aws eks describe-insight output.
	formatEKSInsight = "eks-upgrade-insight"
)

// auditStreamPrefix names the audit log's streams in the cluster's log group; the group's
// other streams (api, authenticator, controller manager, scheduler) are text.
const auditStreamPrefix = "kube-apiserver-audit-"

// otherStream says a log event came from a stream of the group that is not the audit log.
func otherStream(name string) bool {
	return name != "" && !strings.HasPrefix(name, auditStreamPrefix)
}

// isCloudWatchEvent: a FilteredLogEvent or OutputLogEvent carries message (a string) and
// timestamp (epoch milliseconds), which no other shape here has together.
// https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_FilteredLogEvent.html
func isCloudWatchEvent(r object) bool {
	return r.is("message", '"') && r.is("timestamp", '0')
}

func readCloudWatchEvent(r object, emit func(*Event)) error {
	if otherStream(r.str("logStreamName")) {
		return nil
	}
	e, err := decodeEmbedded(r.str("message"))
	if err != nil {
		return fmt.Errorf("message: %w", err)
	}
	emit(e)
	return nil
}

// isCloudWatchSubscription: the payload names its messageType and holds logEvents.
// https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/SubscriptionFilters.html
func isCloudWatchSubscription(r object) bool {
	return r.is("messageType", '"') && r.has("logEvents")
}

func readCloudWatchSubscription(r object, emit func(*Event)) error {
	switch r.str("messageType") {
	case "CONTROL_MESSAGE": // CloudWatch checking that the destination is reachable
		return nil
	case "DATA_MESSAGE":
	default:
		return errors.New("messageType is neither DATA_MESSAGE nor CONTROL_MESSAGE")
	}
	if otherStream(r.str("logStream")) {
		return nil
	}
	var events []struct {
		Message string `json:"message"`
	}
	if err := decode(r["logEvents"], &events); err != nil {
		return fmt.Errorf("logEvents: %w", err)
	}
	var bad firstErr
	for i, le := range events {
		e, err := decodeEmbedded(le.Message)
		if err != nil {
			bad.add(fmt.Errorf("logEvents[%d].message: %w", i, err))
			continue
		}
		emit(e)
	}
	return bad.result(len(events))
}

// isLogsInsightsResults: GetQueryResults holds results (rows of field/value pairs) and the
// query's status.
// https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_GetQueryResults.html
func isLogsInsightsResults(r object) bool {
	return r.is("results", '[') && r.is("status", '"')
}

func readLogsInsightsResults(r object, emit func(*Event)) error {
	// Results of a query still running, or stopped, are partial: counting them would
	// understate the callers.
	if r.str("status") != "Complete" {
		return errors.New("the query's status is not Complete, so its results are partial: run aws logs get-query-results again once it is")
	}
	var rows [][]object
	if err := decode(r["results"], &rows); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	var bad firstErr
	for i, row := range rows {
		if err := readInsightsRow(row, emit); err != nil {
			bad.add(fmt.Errorf("results[%d]: %w", i, err))
		}
	}
	return bad.result(len(rows))
}

// readInsightsRow reads one row of results, an array of {"field", "value"} pairs.
func readInsightsRow(row []object, emit func(*Event)) error {
	fields := make(map[string]string, len(row))
	for _, f := range row {
		fields[f.str("field")] = f.str("value")
	}
	if otherStream(fields["@logStream"]) {
		return nil
	}
	msg, ok := fields["@message"]
	if !ok {
		return errors.New("no @message field: add @message to the query's fields")
	}
	e, err := decodeEmbedded(msg)
	if err != nil {
		return fmt.Errorf("@message: %w", err)
	}
	emit(e)
	return nil
}

// errInsightCounts says an upgrade insight was read: it counts requests per user agent
// over 30 days instead of listing them, which an Event cannot carry (see eksInsightCallers).
var errInsightCounts = errors.New("an upgrade insight counts requests per user agent instead of listing them, and is not read yet: export the control plane's audit log from CloudWatch Logs instead")

// isEKSInsight: DescribeInsight's answer is one insight object.
// https://docs.aws.amazon.com/eks/latest/APIReference/API_DescribeInsight.html
func isEKSInsight(r object) bool {
	return r.is("insight", '{')
}

func readEKSInsight(r object, _ func(*Event)) error {
	callers, err := eksInsightCallers(r)
	if err != nil {
		return err
	}
	if len(callers) > 0 {
		return errInsightCounts
	}
	return nil
}

// An insightCaller is one clientStats entry: the requests of one user agent to one
// deprecated API over the last 30 days, the last at Event.StageTimestamp. The insight gives
// no user, verb, source address or stage.
type insightCaller struct {
	Event    Event
	Requests int64
}

// eksInsightCallers reads an UPGRADE_READINESS insight's clientStats. An insight of another
// category, or without clientStats, has none.
// https://docs.aws.amazon.com/eks/latest/APIReference/API_DeprecationDetail.html
func eksInsightCallers(r object) ([]insightCaller, error) {
	var insight struct {
		Category                string `json:"category"`
		CategorySpecificSummary struct {
			DeprecationDetails []struct {
				Usage              string `json:"usage"`
				StopServingVersion string `json:"stopServingVersion"`
				ClientStats        []struct {
					UserAgent                  string  `json:"userAgent"`
					NumberOfRequestsLast30Days int64   `json:"numberOfRequestsLast30Days"`
					LastRequestTime            awsTime `json:"lastRequestTime"`
				} `json:"clientStats"`
			} `json:"deprecationDetails"`
		} `json:"categorySpecificSummary"`
	}
	if err := decode(r["insight"], &insight); err != nil {
		return nil, fmt.Errorf("insight: %w", err)
	}
	if insight.Category != "UPGRADE_READINESS" {
		return nil, nil
	}
	var callers []insightCaller
	for i, d := range insight.CategorySpecificSummary.DeprecationDetails {
		if len(d.ClientStats) == 0 {
			continue
		}
		ref := objectRefFromPath(d.Usage)
		if ref == nil {
			return nil, fmt.Errorf("deprecationDetails[%d].usage is not an API path such as /apis/group/version/resource", i)
		}
		ann := map[string]string{AnnotationDeprecated: "true"}
		if d.StopServingVersion != "" {
			ann[AnnotationRemovedRelease] = d.StopServingVersion
		}
		for _, c := range d.ClientStats {
			callers = append(callers, insightCaller{
				Event: Event{
					UserAgent:      c.UserAgent,
					ObjectRef:      ref,
					StageTimestamp: string(c.LastRequestTime),
					Annotations:    ann,
				},
				Requests: c.NumberOfRequestsLast30Days,
			})
		}
	}
	return callers, nil
}

// objectRefFromPath reads an API path, /api/v1/<resource> or
// /apis/<group>/<version>/<resource>, as DeprecationDetail.usage gives it
// (https://docs.aws.amazon.com/eks/latest/best-practices/cluster-upgrades.html).
func objectRefFromPath(p string) *ObjectReference {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	switch {
	case len(parts) == 3 && parts[0] == "api":
		return resourceRef("", parts[1], parts[2:])
	case len(parts) >= 4 && parts[0] == "apis":
		return resourceRef(parts[1], parts[2], parts[3:])
	}
	return nil
}

// awsTime is a timestamp as the AWS CLI prints it: epoch seconds (a number, the API's own
// form and CLI v1's default) or ISO 8601 text (CLI v2's default cli_timestamp_format),
// decoded to RFC 3339 with microseconds.
type awsTime string

func (t *awsTime) UnmarshalJSON(b []byte) error {
	if jsontext.Value(b).Kind() == '0' {
		v, err := epochSeconds(string(b))
		if err != nil {
			return err
		}
		*t = awsTime(v)
		return nil
	}
	var s string
	if err := decode(b, &s); err != nil {
		return &valueError{"lastRequestTime is neither epoch seconds nor text"}
	}
	v, err := stageTime(s)
	if err != nil {
		return &valueError{"lastRequestTime is " + err.Error()}
	}
	*t = awsTime(v)
	return nil
}

// epochSeconds reads "1795166102.25" without going through a float, whose 53 bits cannot
// hold today's seconds to the microsecond.
func epochSeconds(n string) (string, error) {
	whole, frac, _ := strings.Cut(n, ".")
	sec, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || strings.Trim(frac, "0123456789") != "" {
		return "", &valueError{"lastRequestTime is not epoch seconds"}
	}
	nsec, _ := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
	return time.Unix(sec, nsec).UTC().Format(rfc3339Micro), nil
}
