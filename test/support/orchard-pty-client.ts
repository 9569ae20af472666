/**
 * A test double of Orchard's PTY process handles (`orchard_env.client.process`: `ContainerProcess`,
 * `AsyncContainerProcess`), from their published behaviour
 * (docs/design/01-orchard-env-api.md#10): the URL is `ws(s)://<base>/sandboxes/{id}/exec/pty?api_key=<key>`; the async handle also
 * sends `X-API-Key` (its aiohttp session's header); a browser-style client puts the key in
 * `Sec-WebSocket-Protocol: api_key.<key>`. Right after connecting it sends the init frame
 * `{type:"init", cmd, env, cwd, rows, cols, login_shell}` (`env` always an object, `cmd` a list: the
 * SDK wraps a string in `["bash","-c",cmd]`), then `stdin` (base64), `signal`, `resize`, `close`.
 */
import { WebSocket } from 'undici';

export type PtyAuth = 'query' | 'header' | 'protocol' | 'none';

export interface PtyOpen {
  baseUrl: string;
  sandboxId: string;
  apiKey: string | undefined;
  auth: PtyAuth;
  command: string | string[];
  env?: Record<string, string> | null;
  cwd?: string | null;
  rows?: number;
  cols?: number;
  loginShell?: boolean;
}

export interface PtyFrame {
  type: string;
  [key: string]: unknown;
}

export class PtyProcess {
  readonly frames: PtyFrame[] = [];
  closeCode: number | undefined;
  closeReason = '';
  readonly closed: Promise<void>;
  readonly #socket: WebSocket;
  #waiters: (() => void)[] = [];

  private constructor(socket: WebSocket) {
    this.#socket = socket;
    this.closed = new Promise((resolve) => {
      socket.addEventListener('close', (event) => {
        this.closeCode = event.code;
        this.closeReason = event.reason;
        this.#wake();
        resolve();
      });
    });
    socket.addEventListener('message', (event) => {
      this.frames.push(JSON.parse(String(event.data)) as PtyFrame);
      this.#wake();
    });
  }

  /** Connects and sends the init frame as `exec(..., pty=True)` does. */
  static async open(options: PtyOpen): Promise<PtyProcess> {
    const url = new URL(`${options.baseUrl.replace(/^http/, 'ws')}/sandboxes/${options.sandboxId}/exec/pty`);
    if (options.apiKey && (options.auth === 'query' || options.auth === 'header')) url.searchParams.set('api_key', options.apiKey);
    const socket = new WebSocket(url, {
      ...(options.apiKey && options.auth === 'header' ? { headers: { 'X-API-Key': options.apiKey } } : {}),
      ...(options.apiKey && options.auth === 'protocol' ? { protocols: [`api_key.${options.apiKey}`] } : {}),
    });
    const process = new PtyProcess(socket);
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener('open', () => resolve(), { once: true });
      socket.addEventListener('error', () => reject(new Error('WebSocket handshake failed')), { once: true });
      socket.addEventListener('close', () => resolve(), { once: true });
    });
    if (socket.readyState === WebSocket.OPEN) {
      const cmd = Array.isArray(options.command) ? options.command : ['bash', '-c', options.command];
      process.send({
        type: 'init',
        cmd,
        env: options.env ?? {},
        cwd: options.cwd ?? null,
        rows: options.rows ?? 24,
        cols: options.cols ?? 80,
        login_shell: options.loginShell ?? false,
      });
    }
    return process;
  }

  send(frame: PtyFrame): void {
    if (this.#socket.readyState === WebSocket.OPEN) this.#socket.send(JSON.stringify(frame));
  }

  writeStdin(data: string | Uint8Array): void {
    this.send({ type: 'stdin', data: Buffer.from(data).toString('base64') });
  }

  kill(signal = 'TERM'): void {
    this.send({ type: 'signal', sig: signal });
  }

  resize(rows: number, cols: number): void {
    this.send({ type: 'resize', rows, cols });
  }

  /** Everything the terminal printed so far. */
  output(): string {
    return Buffer.concat(
      this.frames.filter((frame) => frame.type === 'stdout').map((frame) => Buffer.from(String(frame.data), 'base64')),
    ).toString('utf8');
  }

  /** Waits until `test` holds (checked on every frame and at close); throws with the output so far after `ms`. */
  async until(test: () => boolean, what: string, ms = 20_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!test()) {
      if (this.closeCode !== undefined && !test())
        throw new Error(
          `closed (${this.closeCode} ${this.closeReason}) before ${what}; output: ${JSON.stringify(this.output())}; frames: ${JSON.stringify(this.frames.filter((frame) => frame.type !== 'stdout'))}`,
        );
      if (Date.now() > deadline) throw new Error(`no ${what} within ${ms} ms; output: ${JSON.stringify(this.output())}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Waits for `exit` and returns its code. */
  async wait(ms = 20_000): Promise<number> {
    await this.until(() => this.frames.some((frame) => frame.type === 'exit' || frame.type === 'error'), 'exit', ms);
    const error = this.frames.find((frame) => frame.type === 'error');
    if (error) throw new Error(`pty session error: ${String(error.message)}`);
    return Number(this.frames.find((frame) => frame.type === 'exit')!.code);
  }

  close(): void {
    this.#socket.close();
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}
