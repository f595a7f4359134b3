/**
 * Jobs: every subject's durable jobs, most recently updated first, filtered by state; how long
 * each has run; Follow tails one job's committed events until its terminal event. The list
 * reloads when the live feed says jobs changed.
 */
import { useState } from 'preact/hooks';
import type { JobState, RunEvent } from '../../../src/client/index.js';
import { CopyId, ErrorLine, Scroll, useTicking } from '../components.js';
import { duration, since, time } from '../format.js';
import { EventLog, tailJob, useEventStream } from '../events.js';
import { useLive } from '../live.js';
import { useLoad } from '../load.js';
import type { ViewProps } from './shell.js';

const STATES: JobState[] = ['queued', 'running', 'completed', 'failed', 'cancelled', 'interrupted'];
const TERMINAL = new Set(['run.completed', 'run.failed', 'run.cancelled']);

export function Jobs({ session, live, fail }: ViewProps) {
  const state = useLive(live);
  const [filter, setFilter] = useState<JobState | ''>('');
  const [following, setFollowing] = useState<string>();
  const list = useLoad(
    () => session.operator.jobs({ limit: 100, ...(filter ? { state: filter } : {}) }).catch((failure: unknown) => (fail(failure), Promise.reject(failure))),
    [filter],
    state.jobs,
  );
  const jobs = list.data?.jobs ?? [];
  useTicking(jobs.some(({ job }) => job.state === 'running' || job.state === 'queued'));
  const counts = jobs.reduce<Record<string, number>>((sum, entry) => ((sum[entry.job.state] = (sum[entry.job.state] ?? 0) + 1), sum), {});
  return (
    <section>
      <h2>Jobs</h2>
      <form class="filters" onSubmit={(event) => event.preventDefault()}>
        <label>
          State
          <select name="state" value={filter} onChange={(event) => setFilter((event.target as HTMLSelectElement).value as JobState | '')}>
            <option value="">any</option>
            {STATES.map((value) => (
              <option key={value} value={value}>
                {value}
              </option>
            ))}
          </select>
        </label>
        <span class="muted">{Object.entries(counts).map(([name, count]) => `${count} ${name}`).join(' · ') || (list.data ? 'No job.' : 'Loading…')}</span>
      </form>
      <ErrorLine error={list.error} />
      {jobs.length > 0 && (
        <Scroll>
          <table class="cards" data-testid="jobs">
            <thead>
              <tr>
                <th>Job</th>
                <th>Run</th>
                <th>Subject</th>
                <th>Provider / model</th>
                <th>State</th>
                <th>Events</th>
                <th>Submitted</th>
                <th>Took</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {jobs.map(({ job, subject }) => {
                const finished = job.state !== 'queued' && job.state !== 'running';
                return (
                  <tr key={job.id} data-job={job.id}>
                    <td data-label="Job">
                      <CopyId id={job.id} />
                    </td>
                    <td data-label="Run">
                      <CopyId id={job.runId} href={`#run/${job.runId}`} />
                    </td>
                    <td data-label="Subject">{subject}</td>
                    <td data-label="Provider / model">
                      {job.provider} / {job.model}
                    </td>
                    <td data-label="State">
                      <span class={`badge ${job.state}`}>{job.state}</span>
                      {job.cancelRequested && !finished && <span class="muted"> cancelling</span>}
                    </td>
                    <td data-label="Events">{job.cursor}</td>
                    <td class="time" data-label="Submitted" title={job.createdAt}>
                      {time(job.createdAt)}
                    </td>
                    <td data-label="Took">{duration(since(job.createdAt, finished ? job.updatedAt : undefined))}</td>
                    <td>
                      <button onClick={() => setFollowing(job.id)}>Follow</button>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </Scroll>
      )}
      {following && <JobTail session={session} fail={fail} jobId={following} onClose={() => setFollowing(undefined)} />}
    </section>
  );
}

function JobTail({ session, fail, jobId, onClose }: Pick<ViewProps, 'session' | 'fail'> & { jobId: string; onClose: () => void }) {
  const { events, status } = useEventStream(tailJob(session.operator, jobId), jobId, fail);
  const last: RunEvent | undefined = events.at(-1);
  const outcome = last && TERMINAL.has(last.type) ? last.type.slice(4) : undefined;
  return (
    <div class="panel" data-testid="job-tail">
      <h3>
        Job <CopyId id={jobId} full /> <span class="muted" data-testid="job-outcome">{outcome ?? status}</span> <button onClick={onClose}>Close</button>
      </h3>
      <EventLog events={events} testid="job-events" />
    </div>
  );
}
