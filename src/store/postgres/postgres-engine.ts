/**
 * The SqlEngine over PostgreSQL (`pg`), shared by host replicas: a pool for statements, one
 * client per transaction, and one dedicated LISTEN connection per engine for the signal bus
 * (NOTIFY), re-established with backoff when it drops.
 */
import pg from 'pg';
import type { SqlEngine, SqlValue } from '../sql/engine.js';

/** Channel names are identifiers the store chooses, so LISTEN can name them unquoted-safe. */
const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;
const MAX_PAYLOAD_BYTES = 7000;
const RECONNECT_FIRST_MS = 100;
const RECONNECT_MAX_MS = 5000;

const INT8_OID = 20;
const NUMERIC_OID = 1700;
const toNumber = (value: string): number => Number(value);

/**
 * BIGINT and NUMERIC (what COUNT and SUM return) as JS numbers, for this engine's
 * connections only: pg's global parser registry is left as it is.
 */
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if ((oid === INT8_OID || oid === NUMERIC_OID) && format !== 'binary') return toNumber;
    return format === 'binary' ? pg.types.getTypeParser(oid, 'binary') : pg.types.getTypeParser(oid, 'text');
  }) as pg.CustomTypesConfig['getTypeParser'],
};

/** PostgreSQL cannot be reached (down, refused, connection lost): the store answers 503. */
export class StoreUnavailableError extends Error {
  readonly code = 'STORE_UNAVAILABLE';
  constructor(message: string) {
    super(message);
    this.name = 'StoreUnavailableError';
  }
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);

function isConnectionFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code)) return true;
    // SQLSTATE class 08 (connection exception), admin/crash shutdown, starting up, too many connections.
    if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300') return true;
  }
  return /Connection terminated|timeout exceeded when trying to connect|not queryable|Cannot use a pool after calling end/i.test(error.message);
}

/** Connection failures become StoreUnavailableError (without the connection string); SQL errors pass as they are. */
function classify(error: unknown): unknown {
  if (error instanceof StoreUnavailableError || !isConnectionFailure(error)) return error;
  const { message, code } = error as Error & { code?: unknown };
  return new StoreUnavailableError(`PostgreSQL is unavailable: ${message}${typeof code === 'string' && !message.includes(code) ? ` (${code})` : ''}`);
}

/** `?` placeholders as `$1..$n` (the store's SQL never has `?` inside a string literal). */
export function toPositional(sql: string): string {
  let index = 0;
  return sql.replace(/\?/g, () => `$${++index}`);
}

function checkChannel(channel: string): void {
  if (!CHANNEL.test(channel)) throw new TypeError(`Invalid signal channel name: ${JSON.stringify(channel)}`);
}

function checkPayload(payload: string): void {
  if (Buffer.byteLength(payload, 'utf8') > MAX_PAYLOAD_BYTES) throw new RangeError(`A signal payload is at most ${MAX_PAYLOAD_BYTES} bytes.`);
}

type Queryable = Pick<pg.PoolClient, 'query'>;

async function query<T>(target: Queryable, sql: string, params: readonly SqlValue[] | undefined): Promise<pg.QueryResult & { rows: T[] }> {
  try {
    // No params: the simple protocol, which also takes several statements.
    return params === undefined ? await target.query(sql) : await target.query(toPositional(sql), [...params]);
  } catch (error) {
    throw classify(error);
  }
}

export interface PostgresEngineOptions {
  /** Pool size (default 10). */
  max?: number;
  /**
   * The server ends a session whose transaction sits idle this long (default 15 s, the default
   * lease; the host passes its lease, at least 5 s: `store/open.ts`). The store's transactions wait on nothing but the database between statements, so
   * such a transaction belongs to a stalled replica (paused, frozen, cut off), which has lost its
   * lease by then; left open, its row locks would block every other replica's reaping, and with
   * it their lease renewals.
   */
  idleTransactionTimeoutMs?: number;
}

export class PostgresEngine implements SqlEngine {
  readonly dialect = 'postgres' as const;
  private readonly handlers = new Map<string, Set<(payload: string) => void>>();
  private listener: pg.Client | undefined;
  private listenerReady: Promise<pg.Client> | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private reconnectAttempts = 0;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly clientConfig: pg.ClientConfig,
  ) {}

  /** A pool on `url`, checked with `SELECT 1`; throws StoreUnavailableError when the server can't be reached. */
  static async connect(url: string, options: PostgresEngineOptions = {}): Promise<PostgresEngine> {
    const clientConfig: pg.ClientConfig = {
      connectionString: url,
      types,
      connectionTimeoutMillis: 10_000,
      idle_in_transaction_session_timeout: options.idleTransactionTimeoutMs ?? 15_000,
      application_name: 'agenticdriver',
    };
    let pool: pg.Pool;
    try {
      pool = new pg.Pool({ ...clientConfig, max: options.max ?? 10 });
    } catch {
      // The parser's own errors may carry the URL, which holds the password.
      throw new TypeError('The PostgreSQL URL is not valid.');
    }
    // An idle pooled connection that dies (server restart, terminated backend) emits 'error';
    // the pool drops it and the next statement gets a new one, so there is nothing to do here.
    pool.on('error', () => {});
    const engine = new PostgresEngine(pool, clientConfig);
    try {
      await query(pool, 'SELECT 1', []);
    } catch (error) {
      await pool.end().catch(() => {});
      throw error instanceof StoreUnavailableError ? error : new StoreUnavailableError(`PostgreSQL is unavailable: ${(error as Error).message}`);
    }
    return engine;
  }

  async all<T>(sql: string, params?: readonly SqlValue[]): Promise<T[]> {
    return (await query<T>(this.pool, sql, params ?? [])).rows;
  }

  async run(sql: string, params?: readonly SqlValue[]): Promise<{ changes: number }> {
    return { changes: (await query(this.pool, sql, params ?? [])).rowCount ?? 0 };
  }

  async exec(sql: string): Promise<void> {
    await query(this.pool, sql, undefined);
  }

  async transaction<T>(body: (tx: SqlEngine) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw classify(error);
    }
    // A checked-out client whose connection dies emits 'error'; unhandled, that would end the process.
    const ignore = (): void => {};
    client.on('error', ignore);
    let broken = false;
    const tx = new TransactionEngine(client, this);
    try {
      await query(client, 'BEGIN', undefined);
      let result: T;
      try {
        result = await body(tx);
      } catch (error) {
        await query(client, 'ROLLBACK', undefined).catch(() => {
          broken = true;
        });
        throw error;
      }
      await query(client, 'COMMIT', undefined);
      return result;
    } catch (error) {
      if (error instanceof StoreUnavailableError) broken = true;
      throw error;
    } finally {
      tx.end();
      client.off('error', ignore);
      client.release(broken);
    }
  }

  async publish(channel: string, payload: string): Promise<void> {
    checkChannel(channel);
    checkPayload(payload);
    await query(this.pool, 'SELECT pg_notify(?, ?)', [channel, payload]);
  }

  async subscribe(channel: string, handler: (payload: string) => void): Promise<void> {
    checkChannel(channel);
    if (this.closing) throw new Error('The engine is closed.');
    const existing = this.handlers.get(channel);
    if (existing) {
      existing.add(handler);
      await this.ensureListener();
      return;
    }
    const set = new Set([handler]);
    this.handlers.set(channel, set);
    try {
      const listener = await this.ensureListener();
      // A listener made after the line above already listens on every channel in `handlers`.
      await query(listener, `LISTEN ${channel}`, undefined);
    } catch (error) {
      set.delete(handler);
      if (set.size === 0 && this.handlers.get(channel) === set) this.handlers.delete(channel);
      throw error;
    }
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      clearTimeout(this.reconnectTimer);
      this.reconnectTimer = undefined;
      const listener = this.listener ?? (await this.listenerReady?.catch(() => undefined));
      this.listener = undefined;
      this.listenerReady = undefined;
      await listener?.end().catch(() => {});
      await this.pool.end();
    })();
    return this.closing;
  }

  private ensureListener(): Promise<pg.Client> {
    this.listenerReady ??= this.connectListener().catch((error: unknown) => {
      this.listenerReady = undefined;
      throw classify(error);
    });
    return this.listenerReady;
  }

  private async connectListener(): Promise<pg.Client> {
    const client = new pg.Client({ ...this.clientConfig, keepAlive: true });
    const lost = (): void => this.listenerLost(client);
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (message) => this.deliver(message.channel, message.payload ?? ''));
    try {
      await client.connect();
      for (const channel of this.handlers.keys()) await client.query(`LISTEN ${channel}`);
    } catch (error) {
      await client.end().catch(() => {});
      throw error;
    }
    if (this.closing) {
      await client.end().catch(() => {});
      throw new Error('The engine is closed.');
    }
    this.listener = client;
    this.reconnectAttempts = 0;
    return client;
  }

  private listenerLost(client: pg.Client): void {
    if (client !== this.listener) return;
    this.listener = undefined;
    this.listenerReady = undefined;
    client.end().catch(() => {});
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closing || this.reconnectTimer || this.handlers.size === 0) return;
    const delay = Math.min(RECONNECT_FIRST_MS * 2 ** this.reconnectAttempts, RECONNECT_MAX_MS);
    this.reconnectAttempts += 1;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (this.listenerReady) return;
      this.ensureListener().catch(() => this.scheduleReconnect());
    }, delay);
    // Retrying alone does not keep a process alive; an open pool or server does.
    this.reconnectTimer.unref();
  }

  private deliver(channel: string, payload: string): void {
    for (const handler of this.handlers.get(channel) ?? []) {
      try {
        handler(payload);
      } catch (error) {
        // One subscriber's bug must not stop the others or the listener connection.
        process.emitWarning(`A signal handler for ${channel} threw: ${(error as Error)?.message ?? String(error)}`);
      }
    }
  }

  /** Whether the LISTEN connection is up (tests; health checks). */
  get listening(): boolean {
    return this.listener !== undefined;
  }

  /** The backend process id of the LISTEN connection, for tests that cut it. */
  async listenerPid(): Promise<number> {
    const listener = await this.ensureListener();
    const rows = (await query<{ pid: number }>(listener, 'SELECT pg_backend_pid() AS pid', [])).rows;
    return rows[0]!.pid;
  }
}

/** Statements on the transaction's client. */
class TransactionEngine implements SqlEngine {
  readonly dialect = 'postgres' as const;
  private ended = false;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly root: PostgresEngine,
  ) {}

  end(): void {
    this.ended = true;
  }

  private target(): Queryable {
    if (this.ended) throw new Error('The transaction is over; use the engine, not its tx.');
    return this.client;
  }

  async all<T>(sql: string, params?: readonly SqlValue[]): Promise<T[]> {
    return (await query<T>(this.target(), sql, params ?? [])).rows;
  }

  async run(sql: string, params?: readonly SqlValue[]): Promise<{ changes: number }> {
    return { changes: (await query(this.target(), sql, params ?? [])).rowCount ?? 0 };
  }

  async exec(sql: string): Promise<void> {
    await query(this.target(), sql, undefined);
  }

  /** The SQLite engine cannot nest either; the store is written for both. */
  transaction<T>(): Promise<T> {
    return Promise.reject(new Error('Transactions do not nest.'));
  }

  /** Queued by PostgreSQL and delivered when the transaction commits; dropped on rollback. */
  async publish(channel: string, payload: string): Promise<void> {
    checkChannel(channel);
    checkPayload(payload);
    await query(this.target(), 'SELECT pg_notify(?, ?)', [channel, payload]);
  }

  subscribe(channel: string, handler: (payload: string) => void): Promise<void> {
    return this.root.subscribe(channel, handler);
  }

  close(): Promise<void> {
    return Promise.reject(new Error('A transaction is closed by returning or throwing, not by close().'));
  }
}
