package convert_test

import "testing"

func TestCronJobsMoveToBatchV1(t *testing.T) {
	runSteps(t, []stepCase{
		{
			name: "a v1beta1 CronJob changes only its apiVersion",
			in:   "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: a}\nspec: {schedule: '* * * * *'}",
			want: []string{"apiVersion: batch/v1\nkind: CronJob\n"},
		},
		{
			name: "a v2alpha1 CronJob without history limits says batch/v1 keeps fewer Jobs",
			in:   "apiVersion: batch/v2alpha1\nkind: CronJob\nmetadata: {name: a}\nspec: {schedule: '* * * * *'}",
			want: []string{"apiVersion: batch/v1\n"}, note: "kept every finished Job",
		},
	})
}
