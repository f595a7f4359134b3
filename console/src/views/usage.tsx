/**
 * Usage: tokens over the last 24 hours (one bar per UTC hour) or 30 days (one bar per UTC
 * day) — every bucket drawn, empty ones too, so one busy day is a day's shape rather than one
 * bar — the totals per provider and per model over the same range, spend against budget per
 * scope (budgets.tsx, when limits are configured), and the approval audit log, newest first,
 * a page at a time.
 */
import { useState } from 'preact/hooks';
import type { AuditEntry, UsageTotals } from '../../../src/client/index.js';
import { CopyId, ErrorLine, Scroll } from '../components.js';
import { describeFailure, time } from '../format.js';
import { useLive } from '../live.js';
import { useLoad } from '../load.js';
import { Budgets } from './budgets.js';
import type { ViewProps } from './shell.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const RANGES = {
  hours: { label: 'Last 24 hours', by: 'hour' as const, buckets: 24, size: HOUR, keyLength: 13 },
  days: { label: 'Last 30 days', by: 'day' as const, buckets: 30, size: DAY, keyLength: 10 },
};
type Range = keyof typeof RANGES;

/** The range's bucket keys, oldest first, ending with the current one (`2026-12-01T14` or `2026-12-01`). */
function bucketKeys(range: Range, now: number): string[] {
  const { buckets, size, keyLength } = RANGES[range];
  const current = Math.floor(now / size) * size;
  return Array.from({ length: buckets }, (_, index) => new Date(current - (buckets - 1 - index) * size).toISOString().slice(0, keyLength));
}

export function Usage({ session, live, fail }: ViewProps) {
  const state = useLive(live);
  const [range, setRange] = useState<Range>('hours');
  const totals = useLoad(
    async () => {
      const now = Date.now();
      const keys = bucketKeys(range, now);
      const since = new Date(Date.parse(`${keys[0]}${range === 'hours' ? ':00:00.000Z' : 'T00:00:00.000Z'}`)).toISOString();
      try {
        const [buckets, provider, model] = await Promise.all(
          [RANGES[range].by, 'provider' as const, 'model' as const].map((by) => session.operator.usage({ by, since }).then((answer) => answer.totals)),
        );
        return { keys, buckets: buckets!, provider: provider!, model: model! };
      } catch (failure) {
        fail(failure);
        throw failure;
      }
    },
    [range],
    state.finished,
    2000,
  );
  return (
    <section>
      <h2>
        Usage{' '}
        <span class="segmented" role="group" aria-label="Range">
          {(Object.keys(RANGES) as Range[]).map((name) => (
            <button key={name} type="button" class={name === range ? 'active' : ''} aria-pressed={name === range} data-range={name} onClick={() => setRange(name)}>
              {RANGES[name].label}
            </button>
          ))}
        </span>
      </h2>
      <ErrorLine error={totals.error} />
      {totals.data && <UsageChart range={range} keys={totals.data.keys} rows={totals.data.buckets} />}
      <div class="columns">
        <TotalsTable title="Per provider" rows={totals.data?.provider ?? []} />
        <TotalsTable title="Per model" rows={totals.data?.model ?? []} />
      </div>
      <Budgets session={session} live={live} fail={fail} />
      <Audit session={session} fail={fail} />
    </section>
  );
}

/** Tokens per bucket as bars (input below output), drawn as SVG; labels every few buckets. */
function UsageChart({ range, keys, rows }: { range: Range; keys: string[]; rows: UsageTotals[] }) {
  const byKey = new Map(rows.map((row) => [row.key, row]));
  const width = 960;
  const height = 180;
  const slot = (width - 40) / keys.length;
  const bar = Math.max(2, slot - 4);
  const max = Math.max(1, ...keys.map((key) => (byKey.get(key)?.inputTokens ?? 0) + (byKey.get(key)?.outputTokens ?? 0)));
  const runs = keys.reduce((sum, key) => sum + (byKey.get(key)?.runs ?? 0), 0);
  const every = range === 'hours' ? 3 : 5;
  return (
    <figure>
      <svg viewBox={`0 0 ${width} ${height + 30}`} role="img" aria-label={`Tokens per ${RANGES[range].by}`} data-testid="usage-chart" data-buckets={keys.length}>
        <line x1="30" x2={width - 10} y1={height} y2={height} class="axis" />
        {keys.map((key, index) => {
          const row = byKey.get(key);
          const x = 30 + index * slot;
          const inHeight = ((row?.inputTokens ?? 0) / max) * height;
          const outHeight = ((row?.outputTokens ?? 0) / max) * height;
          const label = range === 'hours' ? `${key.slice(11, 13)}:00` : key.slice(5);
          return (
            <g key={key} data-bucket={key} data-runs={row?.runs ?? 0}>
              <title>{`${key}${range === 'hours' ? ':00' : ''} UTC: ${row?.runs ?? 0} runs, ${(row?.inputTokens ?? 0).toLocaleString()} in / ${(row?.outputTokens ?? 0).toLocaleString()} out`}</title>
              {row && <rect x={x} y={height - inHeight} width={bar} height={inHeight} class="input" />}
              {row && <rect x={x} y={height - inHeight - outHeight} width={bar} height={outHeight} class="output" />}
              {(index % every === 0 || index === keys.length - 1) && (
                <text x={x + bar / 2} y={height + 18} text-anchor="middle">
                  {label}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <figcaption>
        Tokens per {range === 'hours' ? 'hour' : 'day'} (UTC): <span class="swatch input" /> input <span class="swatch output" /> output · {runs} runs · highest {max.toLocaleString()} tokens.
      </figcaption>
    </figure>
  );
}

function TotalsTable({ title, rows }: { title: string; rows: UsageTotals[] }) {
  return (
    <div>
      <h3>{title}</h3>
      {rows.length === 0 ? (
        <p class="muted">No run in this range.</p>
      ) : (
        <Scroll>
          <table>
            <thead>
              <tr>
                <th />
                <th>Runs</th>
                <th>Completed</th>
                <th>Not completed</th>
                <th>Tokens in / out</th>
                <th>Cost USD</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.key}>
                  <td>{row.key}</td>
                  <td>{row.runs}</td>
                  <td>{row.completed}</td>
                  <td>{row.failed + row.cancelled + row.interrupted}</td>
                  <td>
                    {row.inputTokens.toLocaleString()} / {row.outputTokens.toLocaleString()}
                  </td>
                  <td>{row.costUsd.toFixed(4)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </Scroll>
      )}
    </div>
  );
}

function Audit({ session, fail }: Pick<ViewProps, 'session' | 'fail'>) {
  const [pages, setPages] = useState<AuditEntry[][]>([]);
  const [next, setNext] = useState<number>();
  const [error, setError] = useState<string>();
  const first = useLoad(
    () =>
      session.operator.audit({ limit: 20 }).then((page) => {
        setPages([page.records]);
        setNext(page.nextBefore);
        return page;
      }),
    [],
  );
  const older = async () => {
    try {
      const page = await session.operator.audit({ limit: 20, ...(next !== undefined ? { before: next } : {}) });
      setPages((list) => [...list, page.records]);
      setNext(page.nextBefore);
    } catch (failure) {
      setError(describeFailure(failure));
      fail(failure);
    }
  };
  return (
    <>
      <h2>Audit log</h2>
      <ErrorLine error={first.error ?? error} />
      <Scroll>
        <table data-testid="audit">
          <thead>
            <tr>
              <th>When</th>
              <th>Kind</th>
              <th>Subject</th>
              <th>Decided by</th>
              <th>Tool</th>
              <th>Outcome</th>
              <th>Run</th>
            </tr>
          </thead>
          <tbody>
            {pages.flat().map((record) => (
              <tr key={record.id}>
                <td>{time(record.at)}</td>
                <td>{record.kind}</td>
                <td>{record.subject}</td>
                <td>{record.operator ? `${record.operator} (operator, token ${record.tokenId})` : (record.tokenId ?? '')}</td>
                <td>{record.tool ?? ''}</td>
                <td>{record.outcome ?? record.code ?? ''}</td>
                <td>{record.runId ? <CopyId id={record.runId} href={`#run/${record.runId}`} /> : ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Scroll>
      {next !== undefined && <button onClick={older}>Older</button>}
    </>
  );
}
