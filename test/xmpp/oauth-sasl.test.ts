/**
 * Logging in to XMPP with an OAuth token: SASL X-OAUTH2 as the spec gives it (NUL, user, NUL, token) and
 * OAUTHBEARER (RFC 7628). The token needs sasl_auth and must be the account's on this vhost; an
 * authorization identity other than the owner is refused (the impersonation hole of other servers);
 * expired and revoked tokens fail at once; disable_sasl_mechanisms removes the mechanism, globally or per
 * virtual host.
 */
import { expect } from 'chai';
import { RawXmppPeer } from '../support/raw-xmpp.js';
import { TestServer, type RawConfig } from '../support/server.js';
import { login, stopAll, xmppConfig } from '../support/xmpp.js';

const ADMIN = 'admin@localhost:adminpass';

function config(extra: RawConfig = {}): RawConfig {
  return { ...xmppConfig(), oauth_access: 'all', ...extra };
}

/** Opens a stream over TLS on `host` and returns the offered mechanisms and the peer. */
async function saslPeer(t: TestServer, host = 'localhost'): Promise<{ peer: RawXmppPeer; mechanisms: string[] }> {
  const peer = await RawXmppPeer.connect(t.server.portOf('service_c2s')!);
  await peer.open({ to: host });
  await peer.startTls();
  const features = await peer.open({ to: host });
  const mechanisms = [...features.matchAll(/<mechanism>([^<]+)<\/mechanism>/g)].map((m) => m[1]!);
  return { peer, mechanisms };
}

/** What the server answered one SASL element with. */
interface Answer {
  /** `success`, `challenge`, or the failure's condition. */
  readonly outcome: string;
  /** The failure's <text/>. */
  readonly text?: string;
  /** The challenge's payload, decoded. */
  readonly challenge?: string;
}

const unescape = (text: string) => text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

const base64 = (payload: string | Buffer) => Buffer.from(payload).toString('base64');
const authElement = (mechanism: string, text: string) => `<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='${mechanism}'>${text}</auth>`;
const responseElement = (text: string) => `<response xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>${text}</response>`;

/** Sends one SASL element (`<auth/>` or `<response/>`) and reads the answer. */
async function send(peer: RawXmppPeer, element: string): Promise<Answer> {
  peer.resetReceived();
  peer.write(element);
  const [outcome] = await peer.waitFor(/<success\b[^>]*\/>|<success\b[\s\S]*?<\/success>|<failure\b[\s\S]*?<\/failure>|<challenge\b[\s\S]*?<\/challenge>/);
  if (outcome.startsWith('<success')) return { outcome: 'success' };
  if (outcome.startsWith('<challenge')) return { outcome: 'challenge', challenge: Buffer.from(/>([^<]*)</.exec(outcome)![1]!, 'base64').toString() };
  const text = /<text[^>]*>([^<]*)<\/text>/.exec(outcome)?.[1];
  return { outcome: /<failure[^>]*><([a-z-]+)/.exec(outcome)?.[1] ?? outcome, ...(text === undefined ? {} : { text: unescape(text) }) };
}

/** Sends one `<auth/>` and resolves with `success`, `challenge` or the failure's condition. */
async function authenticate(peer: RawXmppPeer, mechanism: string, payload: string | Buffer): Promise<string> {
  return (await send(peer, authElement(mechanism, base64(payload)))).outcome;
}

/** One `<auth/>` on a fresh stream, its text `raw` as given or the payload in base64: the answer, and the peer to go on with. */
async function attempt(t: TestServer, mechanism: string, payload: string | Buffer, raw?: string): Promise<Answer & { peer: RawXmppPeer }> {
  const { peer } = await saslPeer(t);
  return { ...(await send(peer, authElement(mechanism, raw ?? base64(payload)))), peer };
}

describe('SASL with OAuth tokens', () => {
  let t: TestServer;
  const issue = async (jid: string, scopes: string[], ttl = 600) => {
    const res = await t.api('oauth_issue_token', { jid, ttl, scopes }, { basic: ADMIN });
    expect(res.status, res.text).to.equal(200);
    return res.body.token as string;
  };

  before(async () => {
    t = await TestServer.start(config({ host_config: { 'example.com': { disable_sasl_mechanisms: ['X-OAUTH2', 'OAUTHBEARER'] } } }));
    await t.bootstrapAdmin();
    for (const user of ['kim', 'lou']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    await t.server.services.accounts.register('kim', 'example.com', 'kim-pw');
  });
  after(() => t.stop());

  it('offers X-OAUTH2 and OAUTHBEARER, and logs a client in with a sasl_auth token in place of the password', async () => {
    const { peer, mechanisms } = await saslPeer(t);
    peer.destroy();
    expect(mechanisms).to.include.members(['X-OAUTH2', 'OAUTHBEARER']);
    const token = await issue('kim@localhost', ['sasl_auth']);
    const client = await login(t, { user: 'kim', password: token, mechanism: 'X-OAUTH2', resource: 'oauth' });
    try {
      expect(client.jid!.toString()).to.equal('kim@localhost/oauth');
    } finally {
      await stopAll(client);
    }
  });

  it('refuses a token without sasl_auth, of another account, or for another user name, with <not-authorized/>', async () => {
    const apiOnly = await issue('kim@localhost', ['user_resources']);
    const lous = await issue('lou@localhost', ['sasl_auth']);
    for (const payload of [`\0kim\0${apiOnly}`, `\0kim\0${lous}`, `\0kim\0not-a-token`, `\0kim\0`]) {
      const { peer } = await saslPeer(t);
      expect(await authenticate(peer, 'X-OAUTH2', payload), JSON.stringify(payload.slice(0, 8))).to.equal('not-authorized');
      peer.destroy();
    }
  });

  it('refuses an authorization identity other than the token owner (no impersonation)', async () => {
    const token = await issue('lou@localhost', ['sasl_auth']);
    for (const authzid of ['kim@localhost', 'kim', 'admin@localhost']) {
      const { peer } = await saslPeer(t);
      expect(await authenticate(peer, 'X-OAUTH2', `${authzid}\0lou\0${token}`)).to.equal('not-authorized');
      peer.destroy();
    }
    const { peer } = await saslPeer(t);
    // The owner's own JID as authzid is fine.
    expect(await authenticate(peer, 'X-OAUTH2', `lou@localhost\0lou\0${token}`)).to.equal('success');
    peer.destroy();
  });

  it('refuses a token of the same user name on another virtual host', async () => {
    const token = await issue('kim@example.com', ['sasl_auth']);
    const { peer } = await saslPeer(t, 'localhost');
    expect(await authenticate(peer, 'X-OAUTH2', `\0kim\0${token}`)).to.equal('not-authorized');
    peer.destroy();
  });

  it('refuses a revoked token at once, and an expired one', async () => {
    const revoked = await issue('kim@localhost', ['sasl_auth']);
    const first = await saslPeer(t);
    expect(await authenticate(first.peer, 'X-OAUTH2', `\0kim\0${revoked}`)).to.equal('success');
    first.peer.destroy();
    expect((await t.api('oauth_revoke_token', { token: revoked }, { basic: ADMIN })).status).to.equal(200);
    const second = await saslPeer(t);
    expect(await authenticate(second.peer, 'X-OAUTH2', `\0kim\0${revoked}`)).to.equal('not-authorized');
    second.peer.destroy();

    const shortLived = await issue('kim@localhost', ['sasl_auth'], 1);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const third = await saslPeer(t);
    expect(await authenticate(third.peer, 'X-OAUTH2', `\0kim\0${shortLived}`)).to.equal('not-authorized');
    third.peer.destroy();
  });

  it('takes the same tokens with OAUTHBEARER (RFC 7628), failing with a JSON challenge then <not-authorized/>', async () => {
    const token = await issue('kim@localhost', ['sasl_auth']);
    const ok = await saslPeer(t);
    expect(await authenticate(ok.peer, 'OAUTHBEARER', `n,a=kim@localhost,\x01host=localhost\x01auth=Bearer ${token}\x01\x01`)).to.equal('success');
    ok.peer.destroy();

    const bad = await attempt(t, 'OAUTHBEARER', `n,,\x01auth=Bearer nope\x01\x01`);
    expect(bad.outcome).to.equal('challenge');
    expect(JSON.parse(bad.challenge!)).to.deep.equal({ status: 'invalid_token', scope: 'sasl_auth' });
    expect(await send(bad.peer, responseElement(base64('\x01')))).to.deep.equal({
      outcome: 'not-authorized',
      text: 'the token is unknown, expired or revoked, or not an account token of this host',
    });
    bad.peer.destroy();
  });

  // Each refusal of a message that can be read: the challenge (RFC 7628 §3.2.2), the client's %x01 (§3.2.3), then
  // <not-authorized/> naming the problem.
  const refusals: Array<{ what: string; payload: (tokens: Record<string, string>) => string; challenge: object; text: string }> = [
    {
      what: "an authzid other than the owner (another account's bare JID)",
      payload: ({ kim }) => `n,a=lou@localhost,\x01auth=Bearer ${kim}\x01\x01`,
      challenge: { status: 'insufficient_scope' },
      text: 'this token may not act as "lou@localhost"',
    },
    {
      what: 'an escaped authzid that names someone else (a=lou=2Cx)',
      payload: ({ kim }) => `n,a=lou=2Cx,\x01auth=Bearer ${kim}\x01\x01`,
      challenge: { status: 'insufficient_scope' },
      text: 'this token may not act as "lou,x"',
    },
    {
      what: 'a token without sasl_auth',
      payload: ({ apiOnly }) => `n,,\x01auth=Bearer ${apiOnly}\x01\x01`,
      challenge: { status: 'insufficient_scope', scope: 'sasl_auth' },
      text: 'the token lacks the sasl_auth scope',
    },
    {
      what: "a token of the same user name on another virtual host",
      payload: ({ kimElsewhere }) => `n,,\x01auth=Bearer ${kimElsewhere}\x01\x01`,
      challenge: { status: 'invalid_token', scope: 'sasl_auth' },
      text: 'the token is unknown, expired or revoked, or not an account token of this host',
    },
  ];
  for (const { what, payload, challenge, text } of refusals) {
    it(`OAUTHBEARER: refuses ${what} with the error challenge, then <not-authorized/>`, async () => {
      const tokens = {
        kim: await issue('kim@localhost', ['sasl_auth']),
        apiOnly: await issue('kim@localhost', ['user_resources']),
        kimElsewhere: await issue('kim@example.com', ['sasl_auth']),
      };
      const first = await attempt(t, 'OAUTHBEARER', payload(tokens));
      expect(first.outcome, first.text).to.equal('challenge');
      expect(JSON.parse(first.challenge!)).to.deep.equal(challenge);
      expect(await send(first.peer, responseElement(base64('\x01')))).to.deep.equal({ outcome: 'not-authorized', text });
      first.peer.destroy();
    });
  }

  it('OAUTHBEARER: an answer to the error challenge other than %x01 fails the same way, and says so', async () => {
    const token = await issue('kim@localhost', ['sasl_auth']);
    const bad = await attempt(t, 'OAUTHBEARER', `n,a=lou@localhost,\x01auth=Bearer ${token}\x01\x01`);
    expect(bad.outcome).to.equal('challenge');
    // Sending the message again (say, with the right authzid) does not turn the refused exchange into a success.
    expect(await send(bad.peer, responseElement(base64(`n,,\x01auth=Bearer ${token}\x01\x01`)))).to.deep.equal({
      outcome: 'not-authorized',
      text: 'this token may not act as "lou@localhost"; the answer to the error challenge was not %x01',
    });
    bad.peer.destroy();
  });

  it('OAUTHBEARER: reads the RFC 7628 grammar as it is (scheme in any case, y flag, host/port and unknown keys, no initial response)', async () => {
    const token = await issue('kim@localhost', ['sasl_auth']);
    for (const payload of [
      `n,,\x01auth=bearer ${token}\x01\x01`,
      `n,,\x01auth=BEARER   ${token}\x01\x01`,
      `y,a=kim,\x01host=localhost\x01port=5222\x01auth=Bearer ${token}\x01xtra=any value\tof VCHARs\r\n\x01\x01`,
      `n,a=KIM@localhost,\x01auth=Bearer ${token}\x01\x01`,
    ]) {
      const ok = await attempt(t, 'OAUTHBEARER', payload);
      expect(ok.outcome, JSON.stringify(payload.slice(0, 30))).to.equal('success');
      ok.peer.destroy();
    }
    // RFC 6120 §6.4.2: no initial response, an empty challenge, then the message as a response.
    const { peer } = await saslPeer(t);
    expect(await send(peer, authElement('OAUTHBEARER', ''))).to.deep.equal({ outcome: 'challenge', challenge: '' });
    expect((await send(peer, responseElement(base64(`n,,\x01auth=Bearer ${token}\x01\x01`)))).outcome).to.equal('success');
    peer.destroy();
  });

  it('OAUTHBEARER: refuses a message outside the RFC 7628 §3.1 grammar at once, <not-authorized/> naming the problem', async () => {
    const token = await issue('kim@localhost', ['sasl_auth']);
    const auth = `auth=Bearer ${token}\x01`;
    const malformed: Array<[string | Buffer, string]> = [
      // A second auth= would let a component that reads the first one see another token than the one checked.
      [`n,,\x01auth=Bearer garbage\x01${auth}\x01`, 'the key auth appears more than once'],
      [`n,,\x01${auth}auth=Bearer garbage\x01\x01`, 'the key auth appears more than once'],
      [`n,,\x01${auth}AUTH=Bearer ${token}\x01\x01`, 'the key AUTH appears more than once'],
      [`n,,\x01host=a\x01host=b\x01${auth}\x01`, 'the key host appears more than once'],
      [`n,a=kim@localhost,a=lou@localhost,\x01${auth}\x01`, 'the GS2 header must be followed by %x01'],
      [`n,,\x01${auth}\x01extra`, 'data follows the final %x01%x01'],
      [`n,,\x01${auth}\x01\x01`, 'data follows the final %x01%x01'],
      [`n,,\x01${auth}`, 'the message does not end with %x01%x01'],
      [`n,,\x01auth=Bearer ${token}`, 'the message does not end with %x01%x01'],
      [`p=tls-exporter,,\x01${auth}\x01`, 'OAUTHBEARER has no channel binding: the GS2 flag must be n or y, not p='],
      [`x,,\x01${auth}\x01`, 'invalid GS2 channel binding flag "x"'],
      [`F,n,,\x01${auth}\x01`, 'invalid GS2 channel binding flag "F"'],
      [`n,kim,\x01${auth}\x01`, 'the authzid in the GS2 header is not a=<saslname>'],
      [`n,a=,\x01${auth}\x01`, 'the authzid in the GS2 header is not a=<saslname>'],
      [`n,a=kim=40localhost,\x01${auth}\x01`, 'the authzid in the GS2 header is not a=<saslname>'],
      [`n,,${auth}\x01`, 'the GS2 header must be followed by %x01'],
      [`n,\x01${auth}\x01`, 'the GS2 header (n,, or n,a=<authzid>,) is missing or not closed by a comma'],
      ['\x01', 'the GS2 header (n,, or n,a=<authzid>,) is missing or not closed by a comma'],
      [`n,,\x01host=localhost\x01\x01`, 'the auth key is missing'],
      [`n,,\x01\x01`, 'the auth key is missing'],
      [`n,,\x01auth=Basic a2ltOnB3\x01\x01`, 'auth is not "Bearer <token>"'],
      [`n,,\x01auth=Bearer\x01\x01`, 'auth is not "Bearer <token>"'],
      [`n,,\x01auth=Bearer \x01\x01`, 'auth is not "Bearer <token>"'],
      [`n,,\x01auth=Bearer${token}\x01\x01`, 'auth is not "Bearer <token>"'],
      [`n,,\x01auth=Bearer ${token} extra\x01\x01`, 'auth is not "Bearer <token>"'],
      [`n,,\x01auth=Bearer\t${token}\x01\x01`, 'auth is not "Bearer <token>"'],
      [`n,,\x01${auth}host\x01\x01`, 'a key-value pair is not key=value with a key of letters'],
      [`n,,\x01${auth}=x\x01\x01`, 'a key-value pair is not key=value with a key of letters'],
      [`n,,\x01${auth}ho-st=x\x01\x01`, 'a key-value pair is not key=value with a key of letters'],
      [`n,,\x01${auth}host=caf\u00e9\x01\x01`, 'the value of host has characters other than visible ASCII, space, tab, CR and LF'],
      [`n,,\x01${auth}host=a\x7fb\x01\x01`, 'the value of host has characters other than visible ASCII, space, tab, CR and LF'],
      [Buffer.concat([Buffer.from(`n,a=`), Buffer.from([0xff]), Buffer.from(`,\x01${auth}\x01`)]), 'the message is not UTF-8'],
      [Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`n,,\x01${auth}\x01`)]), 'invalid GS2 channel binding flag "\ufeffn"'],
      ['', 'the GS2 header (n,, or n,a=<authzid>,) is missing or not closed by a comma'],
    ];
    for (const [payload, problem] of malformed) {
      const answer = await attempt(t, 'OAUTHBEARER', payload, payload === '' ? '=' : undefined);
      expect({ outcome: answer.outcome, text: answer.text }, JSON.stringify(payload.toString())).to.deep.equal({ outcome: 'not-authorized', text: `malformed OAUTHBEARER message: ${problem}` });
      answer.peer.destroy();
    }
  });

  it('X-OAUTH2: refuses a payload that is not NUL, user name, NUL, token with <not-authorized/>, not malformed-request', async () => {
    const token = await issue('kim@localhost', ['sasl_auth']);
    for (const payload of [`kim${token}`, `kim\0${token}`, `\0kim\0${token}\0extra`, `\0\0kim\0${token}`, '']) {
      const answer = await attempt(t, 'X-OAUTH2', payload, payload === '' ? '=' : undefined);
      expect({ outcome: answer.outcome, text: answer.text }, JSON.stringify(payload.slice(0, 8))).to.deep.equal({ outcome: 'not-authorized', text: 'expected NUL, user name, NUL, token' });
      answer.peer.destroy();
    }
    const other = await attempt(t, 'X-OAUTH2', `\0lou\0${token}`);
    expect({ outcome: other.outcome, text: other.text }).to.deep.equal({ outcome: 'not-authorized', text: 'the token does not belong to "lou"' });
    other.peer.destroy();
    // Control characters of the client's are quoted in the text, which would not be XML otherwise.
    const control = await attempt(t, 'X-OAUTH2', `kim\x01@localhost\0kim\0${token}`);
    expect({ outcome: control.outcome, text: control.text }).to.deep.equal({ outcome: 'not-authorized', text: 'this token may not act as "kim\\u0001@localhost"' });
    control.peer.destroy();
  });

  it('refuses a response that is not base64 with <not-authorized/> in X-OAUTH2 and OAUTHBEARER, keeping incorrect-encoding for PLAIN', async () => {
    for (const mechanism of ['X-OAUTH2', 'OAUTHBEARER']) {
      for (const raw of ['!!!!', '%%%', 'a b=']) {
        const answer = await attempt(t, mechanism, '', raw);
        expect({ outcome: answer.outcome, text: answer.text }, `${mechanism} ${raw}`).to.deep.equal({ outcome: 'not-authorized', text: 'the response is not base64' });
        answer.peer.destroy();
      }
    }
    // Also after OAUTHBEARER's error challenge: the answer is not base64, and the exchange fails.
    const bad = await attempt(t, 'OAUTHBEARER', `n,,\x01auth=Bearer nope\x01\x01`);
    expect(bad.outcome).to.equal('challenge');
    expect(await send(bad.peer, responseElement('!!!!'))).to.deep.equal({ outcome: 'not-authorized', text: 'the response is not base64' });
    bad.peer.destroy();
    // PLAIN keeps RFC 6120's conditions for these cases.
    const plain = await attempt(t, 'PLAIN', '', '!!!!');
    expect({ outcome: plain.outcome, text: plain.text }).to.deep.equal({ outcome: 'incorrect-encoding', text: 'the response is not base64' });
    plain.peer.destroy();
    const noNuls = await attempt(t, 'PLAIN', 'kim-pw');
    expect(noNuls.outcome).to.equal('malformed-request');
    noNuls.peer.destroy();
  });

  it('removes the mechanisms on a virtual host whose host_config disables them', async () => {
    const { peer, mechanisms } = await saslPeer(t, 'example.com');
    expect(mechanisms).to.not.include('X-OAUTH2');
    expect(mechanisms).to.not.include('OAUTHBEARER');
    const token = await issue('kim@example.com', ['sasl_auth']);
    expect(await authenticate(peer, 'X-OAUTH2', `\0kim\0${token}`)).to.equal('invalid-mechanism');
    peer.destroy();
  });
});

describe('SASL with OAuth tokens disabled globally', () => {
  it('offers no X-OAUTH2 when disable_sasl_mechanisms lists it', async () => {
    const t = await TestServer.start(config({ disable_sasl_mechanisms: ['x-oauth2'] }));
    try {
      const { peer, mechanisms } = await saslPeer(t);
      expect(mechanisms).to.not.include('X-OAUTH2');
      expect(mechanisms).to.include('OAUTHBEARER');
      expect(await authenticate(peer, 'X-OAUTH2', '\0kim\0whatever')).to.equal('invalid-mechanism');
      peer.destroy();
    } finally {
      await t.stop();
    }
  });
});
