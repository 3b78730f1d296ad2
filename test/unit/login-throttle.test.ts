/**
 * LoginThrottle's clock: failures are counted over login_ban_lifetime from the first, a ban lasts that long from
 * the failure that caused it, and then everything starts again. (The doors that use it are tested end to end in
 * test/security/login-limits.test.ts; time is what a test against the server cannot wait for.)
 */
import { expect } from 'chai';
import { LoginThrottle, type LoginThrottleSettings } from '../../kernel/src/accounts/login-throttle.js';
import { createLogger } from '../../kernel/src/log/logger.js';
import { Writable } from 'node:stream';

const settings: LoginThrottleSettings = { perAccount: 3, perAddress: 5, banSeconds: 100, exempt: (ip) => ip === '10.9.9.9' };

function throttle(): { throttle: LoginThrottle; logged: string[] } {
  const logged: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line) logged.push(JSON.parse(line).msg);
      done();
    },
  });
  return { throttle: new LoginThrottle(() => settings, createLogger({ level: 'info', destination: sink })), logged };
}

describe('LoginThrottle', () => {
  const t0 = 1_000_000;

  it('bans an account at an address for the lifetime, from the failure that reached the limit', () => {
    const { throttle: limit } = throttle();
    limit.failed('10.0.0.1', 'a@h', 'c2s', 1, t0);
    limit.failed('10.0.0.1', 'a@h', 'c2s', 1, t0 + 50_000);
    expect(limit.refusal('10.0.0.1', 'a@h', t0 + 60_000)).to.equal(undefined);
    limit.failed('10.0.0.1', 'a@h', 'c2s', 1, t0 + 90_000);
    expect(limit.refusal('10.0.0.1', 'a@h', t0 + 90_000)?.retryAfter).to.equal(100);
    expect(limit.refusal('10.0.0.1', 'a@h', t0 + 189_000)?.retryAfter).to.equal(1);
    expect(limit.refusal('10.0.0.1', 'a@h', t0 + 190_000)).to.equal(undefined);
    // The count starts again after the ban.
    limit.failed('10.0.0.1', 'a@h', 'c2s', 2, t0 + 191_000);
    expect(limit.refusal('10.0.0.1', 'a@h', t0 + 191_000)).to.equal(undefined);
  });

  it('forgets failures older than the lifetime', () => {
    const { throttle: limit } = throttle();
    limit.failed('10.0.0.2', 'a@h', 'http_api', 2, t0);
    limit.failed('10.0.0.2', 'a@h', 'http_api', 1, t0 + 100_001);
    expect(limit.refusal('10.0.0.2', 'a@h', t0 + 100_001)).to.equal(undefined);
  });

  it('bans an address for any account, and logs each ban once', () => {
    const { throttle: limit, logged } = throttle();
    for (let i = 0; i < 5; i++) limit.failed('10.0.0.3', `u${i}@h`, 'xmlrpc', 1, t0);
    expect(limit.refusal('10.0.0.3', undefined, t0)?.message).to.match(/too many failed logins from 10\.0\.0\.3/);
    expect(limit.refusal('10.0.0.3', 'other@h', t0)).not.to.equal(undefined);
    expect(limit.refusal('10.0.0.4', 'u0@h', t0)).to.equal(undefined);
    limit.failed('10.0.0.3', 'u9@h', 'xmlrpc', 1, t0);
    expect(logged.filter((m) => m.startsWith('login ban: 10.0.0.3 may not log in for'))).to.have.length(1);
  });

  it('clears an account count on success but keeps the address count', () => {
    const { throttle: limit } = throttle();
    limit.failed('10.0.0.5', 'a@h', 'oauth', 2, t0);
    limit.succeeded('10.0.0.5', 'a@h');
    limit.failed('10.0.0.5', 'a@h', 'oauth', 2, t0);
    // Four failures on a@h in all, but two since its success: under its limit of 3; the address has 4 of 5.
    expect(limit.refusal('10.0.0.5', 'a@h', t0)).to.equal(undefined);
    limit.failed('10.0.0.5', 'b@h', 'oauth', 1, t0);
    expect(limit.refusal('10.0.0.5', undefined, t0)).not.to.equal(undefined);
  });

  it('never counts an exempt address, and unban lifts bans', () => {
    const { throttle: limit } = throttle();
    limit.failed('10.9.9.9', 'a@h', 'c2s', 50, t0);
    expect(limit.refusal('10.9.9.9', 'a@h', t0)).to.equal(undefined);
    limit.failed('10.0.0.6', 'a@h', 'c2s', 5, t0);
    expect(limit.refusal('10.0.0.6', 'a@h', t0)).not.to.equal(undefined);
    expect(limit.unban((ip) => ip === '10.0.0.6')).to.equal(1);
    expect(limit.refusal('10.0.0.6', 'a@h', t0)).to.equal(undefined);
  });
});
