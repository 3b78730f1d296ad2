/**
 * A client that trickles its request (slow loris) is cut off after the listener's request_timeout with a
 * 408, on the HTTP and the XML-RPC listeners, instead of holding the connection for Node's five minutes.
 */
import { expect } from 'chai';
import { connect } from 'node:net';
import { baseConfig, TestServer } from '../support/server.js';

/** Sends a request that announces 100 bytes of body and delivers 4; resolves with what the server answers and when. */
function trickle(port: number, path: string): Promise<{ text: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString()));
    socket.on('error', reject);
    socket.on('close', () => resolve({ text, ms: Date.now() - started }));
    socket.write(`POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a"`);
  });
}

describe('slow clients', () => {
  let t: TestServer;

  before(async () => {
    const config = baseConfig();
    (config.listen as any[])[0].request_timeout = 1;
    (config.listen as any[]).push({ port: 0, ip: '127.0.0.1', module: 'service_xmlrpc', request_timeout: 1 });
    t = await TestServer.start(config);
  });
  after(() => t.stop());

  for (const [listener, path] of [
    ['service_http', '/api/status'],
    ['service_xmlrpc', '/'],
  ] as const) {
    it(`${listener}: a request body that never arrives is answered 408 after request_timeout`, async () => {
      const { text, ms } = await trickle(t.server.portOf(listener)!, path);
      expect(text).to.match(/^HTTP\/1\.1 408 /);
      expect(ms).to.be.within(900, 10_000);
    });
  }

  it('serves the next client normally', async () => {
    expect((await t.api('status')).status).to.equal(200);
  });
});
