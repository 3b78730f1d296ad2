/**
 * What the push tests share: a small app server of their own — a client of the same server
 * (appserver@localhost/push, since the server has no s2s or components) that answers each pubsub publish
 * as told and records what it got — the phone's requests (enable, disable), a connection cut as a network
 * loss would cut it, and waiting for the server to see a session detached.
 */
import { expect } from 'chai';
import type { TestServer } from '../support/server.js';
import { login, next, xml, type Client, type Element } from '../support/xmpp.js';

export const NS_PUSH = 'urn:xmpp:push:0';
export const NS_PUBSUB = 'http://jabber.org/protocol/pubsub';
export const NS_DATA = 'jabber:x:data';
export const APP_SERVER = 'appserver@localhost/push';
const NS_STANZAS = 'urn:ietf:params:xml:ns:xmpp-stanzas';

/** How the app server answers: a result, or an error of this type and condition. */
export type Answer = 'result' | { type: string; condition: string };

export class AppServer {
  /** Every publish it got, in order. */
  readonly received: Element[] = [];
  answer: Answer = 'result';

  private constructor(readonly client: Client) {}

  static async start(t: TestServer): Promise<AppServer> {
    const client = await login(t, { user: 'appserver', password: 'appserver-pw', resource: 'push' });
    const app = new AppServer(client);
    client.iqCallee.set(NS_PUBSUB, 'pubsub', (ctx: { stanza: Element }) => {
      app.received.push(ctx.stanza);
      const answer = app.answer;
      return answer === 'result' ? true : xml('error', { type: answer.type }, xml(answer.condition, { xmlns: NS_STANZAS }));
    });
    return app;
  }

  /** The next publish for `node`. */
  publish(node: string, ms = 8000): Promise<Element> {
    return next(this.client, (s) => s.is('iq') && s.attrs.type === 'set' && s.getChild('pubsub', NS_PUBSUB)?.getChild('publish')?.attrs.node === node, ms);
  }
}

/** The summary form's fields of a publish, by name. */
export function summaryOf(iq: Element): Record<string, string> {
  const publish = iq.getChild('pubsub', NS_PUBSUB)!.getChild('publish')!;
  const form = publish.getChild('item')!.getChild('notification', NS_PUSH)!.getChild('x', NS_DATA)!;
  expect(form.attrs.type).to.equal('submit');
  return Object.fromEntries(form.getChildren('field').map((f) => [f.attrs.var as string, f.getChildText('value') ?? '']));
}

export function publishForm(fields: Record<string, string>, formType = 'http://jabber.org/protocol/pubsub#publish-options', type = 'submit'): Element {
  return xml(
    'x',
    { xmlns: NS_DATA, type },
    xml('field', { var: 'FORM_TYPE' }, xml('value', {}, formType)),
    ...Object.entries(fields).map(([name, value]) => xml('field', { var: name }, xml('value', {}, value))),
  );
}

export function enable(client: Client, node: string, form?: Element, jid = APP_SERVER, to?: string): Promise<Element> {
  return client.iqCaller.request(xml('iq', { type: 'set', ...(to ? { to } : {}) }, xml('enable', { xmlns: NS_PUSH, jid, node }, form)));
}

export function disable(client: Client, node?: string, jid = APP_SERVER): Promise<Element> {
  return client.iqCaller.request(xml('iq', { type: 'set' }, xml('disable', { xmlns: NS_PUSH, jid, node })));
}

/** The stanza error condition of a request the server refuses. */
export async function refusal(request: Promise<Element>): Promise<string> {
  const err: any = await request.then(
    () => expect.fail('the request was accepted'),
    (e) => e,
  );
  return err?.condition ?? err?.name;
}

/** Cuts the client's connection without a proper close, as a network loss would. */
export function cut(client: Client): void {
  (client as any).socket.socket.destroy();
}

/** @xmpp/client enables stream management (with resumption) right after going online; waits for <enabled/>. */
export async function smEnabled(client: Client): Promise<void> {
  const sm = (client as any).streamManagement;
  for (let i = 0; i < 250 && !sm.enabled; i++) await pause(20);
  expect(sm.enabled, 'stream management enabled').to.equal(true);
}

/** Waits until the server keeps `full`'s session detached (its connection gone, the session waiting). */
export async function detached(t: TestServer, full: string): Promise<void> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const session = t.server.services.xmpp.localSessions.get(full);
    if (session && !session.closed && session.outlet === undefined) return;
    if (Date.now() > deadline) expect.fail(`${full} was not kept detached`);
    await pause(20);
  }
}

/** Waits until `check` holds (a database change made by the server on its own). */
export async function until(check: () => Promise<boolean>, what: string, ms = 8000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) expect.fail(`timed out waiting for ${what}`);
    await pause(25);
  }
}

export function pause(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
