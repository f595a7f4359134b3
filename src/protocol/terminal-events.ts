/** The event types that end a run's stream; apart from ./schemas.ts so a client can use it without loading TypeBox. */
export const TERMINAL_EVENT_TYPES: ReadonlySet<string> = new Set(['run.completed', 'run.failed', 'run.cancelled']);
