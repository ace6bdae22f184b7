/* fuzz_job_advance.c - fuzz_job.c with a restart and the rest of the job's
 * life after the replay: see FUZZ_JOB_ADVANCE there. Same input format and
 * seeds (corpus/job_advance is a copy of corpus/job). */
#define FUZZ_JOB_ADVANCE 1
#include "fuzz_job.c"
