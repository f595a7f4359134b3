/**
 * A run's or job's events as they arrive: grouped by step (earlier steps collapse, the current
 * one stays open), consecutive text deltas read as one text, every event keeps its number, and
 * the list follows the newest event unless the operator scrolls up to read (scrolling back to
 * the bottom follows again).
 */
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { OperatorClient, RunEvent } from '../../src/client/index.js';
import { bounded, describeFailure, isAuthFailure } from './format.js';

const KEPT_EVENTS = 2000;

interface Group {
  /** 0: before the first step. */
  step: number;
  items: Item[];
}

/** One line: an event, or a run of text deltas read together. */
interface Item {
  first: number;
  last: number;
  type: string;
  detail: string;
}

/** Follows an event stream into a list; a new `source` restarts it. */
export function useEventStream(source: (signal: AbortSignal) => AsyncGenerator<RunEvent>, key: string, onAuthFailure: (failure: unknown) => void) {
  const [events, setEvents] = useState<RunEvent[]>([]);
  const [status, setStatus] = useState('connecting');
  useEffect(() => {
    const stop = new AbortController();
    setEvents([]);
    setStatus('live');
    void (async () => {
      try {
        for await (const event of source(stop.signal)) setEvents((list) => [...list.slice(-(KEPT_EVENTS - 1)), event]);
        if (!stop.signal.aborted) setStatus('ended');
      } catch (failure) {
        if (stop.signal.aborted) return;
        if (isAuthFailure(failure)) onAuthFailure(failure);
        setStatus(describeFailure(failure));
      }
    })();
    return () => stop.abort();
  }, [key]);
  return { events, status };
}

export function watchRun(operator: OperatorClient, runId: string) {
  return (signal: AbortSignal) => operator.watchRun(runId, signal);
}

export function tailJob(operator: OperatorClient, jobId: string) {
  return (signal: AbortSignal) => operator.tailJob(jobId, { signal });
}

function groups(events: RunEvent[]): Group[] {
  const list: Group[] = [{ step: 0, items: [] }];
  for (const event of events) {
    if (event.type === 'step.started') list.push({ step: event.step, items: [] });
    const { items } = list.at(-1)!;
    const previous = items.at(-1);
    if (event.type === 'text.delta' && previous?.type === 'text.delta') {
      previous.last = event.sequence;
      previous.detail += event.text;
      continue;
    }
    items.push({ first: event.sequence, last: event.sequence, type: event.type, detail: describe(event) });
  }
  return list.filter((group) => group.items.length > 0);
}

function describe(event: RunEvent): string {
  switch (event.type) {
    case 'run.started':
      return `${event.provider} / ${event.model}`;
    case 'step.started':
      return `step ${event.step}`;
    case 'text.delta':
      return event.text;
    case 'run.progress':
      return event.phase;
    case 'tool.called':
      return `${event.call.name} ${bounded(event.call.arguments, 200, true)}`;
    case 'tool.completed':
      return `${event.callId} → ${bounded(event.output, 200, true)}`;
    case 'approval.requested':
      return `${event.approval.call.name} (approval ${event.approval.approvalId})`;
    case 'approval.resolved':
      return `${event.resolution.outcome} (approval ${event.resolution.approvalId})`;
    case 'tool.execution.requested':
      return `${event.execution.call.name} (execution ${event.execution.executionId})`;
    case 'usage.reported':
      return `step ${event.step}: ${event.usage.inputTokens ?? 0} in / ${event.usage.outputTokens ?? 0} out`;
    case 'run.completed':
      return `${event.result.steps} steps, finish: ${event.result.finishReason}`;
    case 'run.failed':
    case 'run.cancelled':
      return `${event.error.code}: ${event.error.message}`;
    default:
      return '';
  }
}

export function EventLog({ events, testid = 'events' }: { events: RunEvent[]; testid?: string }) {
  const box = useRef<HTMLDivElement>(null);
  const [follow, setFollow] = useState(true);
  const [toggled, setToggled] = useState<Record<number, boolean>>({});
  const list = groups(events);
  const current = list.at(-1)?.step;

  useLayoutEffect(() => {
    if (follow && box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [events.length, follow]);

  const onScroll = () => {
    const element = box.current;
    if (!element) return;
    const atBottom = element.scrollTop + element.clientHeight >= element.scrollHeight - 4;
    if (atBottom !== follow) setFollow(atBottom);
  };

  return (
    <div class="event-log">
      <div class="event-tools">
        <label>
          <input type="checkbox" checked={follow} onChange={(event) => setFollow((event.target as HTMLInputElement).checked)} data-testid="follow" /> Follow the newest
        </label>
        <span class="muted">{events.length} events</span>
      </div>
      <div class="events" ref={box} onScroll={onScroll} data-testid={testid}>
        {list.map((group) => (
          <details
            key={group.step}
            open={toggled[group.step] ?? group.step === current}
            data-step={group.step}
            onToggle={(event) => {
              const open = (event.currentTarget as HTMLDetailsElement).open;
              if (open !== (toggled[group.step] ?? group.step === current)) setToggled((state) => ({ ...state, [group.step]: open }));
            }}
          >
            <summary>
              {group.step === 0 ? 'Start' : `Step ${group.step}`} <span class="muted">· {group.items.length === 1 ? '1 line' : `${group.items.length} lines`}</span>
            </summary>
            <ol>
              {group.items.map((item) => (
                <li key={item.first} data-type={item.type}>
                  <span class="seq mono">{item.first === item.last ? `#${item.first}` : `#${item.first}–${item.last}`}</span>
                  <span class="type">{item.type}</span>
                  <span class={item.type === 'text.delta' ? 'detail text' : 'detail muted'}>{item.detail}</span>
                </li>
              ))}
            </ol>
          </details>
        ))}
      </div>
    </div>
  );
}
