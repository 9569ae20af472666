/**
 * The HTTP half the bench's stubs share (policy-stub.ts, scorer-stub.ts, recording-proxy.ts): a node:http server on a
 * free loopback port whose handler gets the request body as text and answers JSON; a handler
 * that throws answers 500 with the message. `close()` drops kept-alive connections too.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StubReply {
  status: number;
  json?: unknown;
  /** A body sent as it is (with `contentType`), instead of `json`: a pass-through's upstream answer. */
  text?: string;
  contentType?: string;
}

export type StubHandler = (request: IncomingMessage, body: string) => Promise<StubReply>;

export interface StubServer {
  /** `http://127.0.0.1:<port>`, no path. */
  origin: string;
  close(): Promise<void>;
}

async function readText(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startStubServer(handler: StubHandler): Promise<StubServer> {
  const server = createServer((request, response) => {
    const send = (reply: StubReply) =>
      response
        .writeHead(reply.status, { 'content-type': reply.contentType ?? 'application/json' })
        .end(reply.text ?? JSON.stringify(reply.json));
    readText(request)
      .then((body) => handler(request, body))
      .then(send, (error: unknown) =>
        send({ status: 500, json: { error: { message: error instanceof Error ? error.message : String(error) } } }),
      );
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
