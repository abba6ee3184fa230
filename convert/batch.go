package convert

// batch/v1beta1 CronJob has batch/v1's fields and defaults (concurrencyPolicy Allow, suspend
// false, 3 successful and 1 failed job kept), and its jobTemplate holds a batch/v1 JobSpec:
// the API server converts it field for field.
func init() {
	register("batch/v1beta1/CronJob", "batch/v1/CronJob", identical)
	register("batch/v2alpha1/CronJob", "batch/v1/CronJob", cronJobV2alpha1)
}

// cronJobV2alpha1 converts a batch/v2alpha1 CronJob, whose fields batch/v1 has. v2alpha1 did
// not default the history limits, and the controller kept every finished Job while they were
// unset; batch/v1 keeps 3 successful and 1 failed. Kubernetes itself gave stored v2alpha1
// objects the new limits, and no number says "all", so the limits are left unset and named.
func cronJobV2alpha1(s *State) {
	spec := get(s.Obj, "spec")
	for _, f := range []struct {
		key  string
		keep int
	}{{"successfulJobsHistoryLimit", 3}, {"failedJobsHistoryLimit", 1}} {
		if isNull(get(spec, f.key)) {
			s.Note("/spec/"+f.key, keyNode(s.Obj, "spec"),
				"batch/v2alpha1 kept every finished Job when %s was unset; batch/v1 keeps %d: set it to keep more", f.key, f.keep)
		}
	}
}
