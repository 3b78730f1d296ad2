/**
 * A real HTTP client for the mod_fail2ban tests: Node's http.request, because it can choose the local address a
 * request comes from (each test guesses from its own 127.0.0.x, all routed to lo), which fetch cannot.
 */
import { request as httpRequest } from 'node:http';

export interface HttpAnswer {
  readonly status: number;
  readonly retryAfter: string | undefined;
  readonly text: string;
}

/**
 * A POST from a chosen local address, on a connection of its own (as a new client would: under workers, each
 * connection may reach another worker).
 */
export function postFrom(localAddress: string, port: number, path: string, headers: Record<string, string>, body: string): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, localAddress, method: 'POST', headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] as string | undefined, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A call to /api/user_resources with HTTP Basic as `user`@localhost, from a chosen local address. */
export function basicFrom(localAddress: string, port: number, user: string, password: string): Promise<HttpAnswer> {
  const headers = { authorization: `Basic ${Buffer.from(`${user}@localhost:${password}`).toString('base64')}`, 'content-type': 'application/json' };
  return postFrom(localAddress, port, '/api/user_resources', headers, JSON.stringify({ user, host: 'localhost' }));
}
