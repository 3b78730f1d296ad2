/**
 * unban_ip's address argument, read by the plugin API's parseAddressRange and matched by addressInRange: plain
 * IPv4 and IPv6 addresses, masks on both, ejabberd's IPv4-written-as-IPv6 form, and what is malformed. And the
 * kernel's LoginThrottle as mod_fail2ban drives it (address bans only while set, imposed bans, unbanning a range),
 * where the time a test against the server cannot wait for is given.
 */
import { expect } from 'chai';
import { Writable } from 'node:stream';
import { addressInRange, parseAddressRange } from '@service/plugin-api';
import { LoginThrottle } from '../../kernel/src/accounts/login-throttle.js';
import { createLogger } from '../../kernel/src/log/logger.js';

describe('unban_ip addresses', () => {
  it('reads addresses and networks of both families', () => {
    expect(parseAddressRange('192.0.2.7')).to.deep.equal({ family: 'ipv4', address: '192.0.2.7', prefixLength: 32 });
    expect(parseAddressRange('192.0.2.0/24')).to.deep.equal({ family: 'ipv4', address: '192.0.2.0', prefixLength: 24 });
    expect(parseAddressRange('2001:db8::/32')).to.deep.equal({ family: 'ipv6', address: '2001:db8::', prefixLength: 32 });
    expect(parseAddressRange('::FFFF:127.0.0.1/128')).to.deep.equal({ family: 'ipv4', address: '127.0.0.1', prefixLength: 32 });
    expect(parseAddressRange('0.0.0.0/0')?.prefixLength).to.equal(0);
  });

  it('refuses what is not an address with an optional mask', () => {
    for (const text of ['', 'localhost', '192.0.2', '192.0.2.0/33', '192.0.2.0/-1', '192.0.2.0/', '192.0.2.0/2x', '2001:db8::/129', '::ffff:127.0.0.1/95', '192.0.2.0/24/8']) {
      expect(parseAddressRange(text), text).to.equal(undefined);
    }
  });

  it('matches peer addresses, including IPv4 peers on a dual-stack socket', () => {
    const net = parseAddressRange('192.0.2.0/24')!;
    expect(addressInRange('192.0.2.200', net)).to.equal(true);
    expect(addressInRange('::ffff:192.0.2.200', net)).to.equal(true);
    expect(addressInRange('192.0.3.1', net)).to.equal(false);
    expect(addressInRange('2001:db8::1', net)).to.equal(false);
    const six = parseAddressRange('2001:db8::/32')!;
    expect(addressInRange('2001:db8:ffff::1', six)).to.equal(true);
    expect(addressInRange('2001:db9::1', six)).to.equal(false);
  });
});

describe('LoginThrottle as mod_fail2ban drives it', () => {
  const quiet = createLogger({ level: 'error', destination: new Writable({ write: (_chunk, _encoding, done) => done() }) });
  const settings = { perAccount: 100, banSeconds: 100, exempt: () => false };
  const t0 = 2_000_000;

  it('bans addresses only while address bans are set, and lifts a range', () => {
    const limit = new LoginThrottle(() => settings, quiet);
    for (let i = 0; i < 30; i++) limit.failed('10.1.0.1', `u${i}@h`, 'c2s', 1, t0);
    expect(limit.refusal('10.1.0.1', undefined, t0), 'no address bans without the module').to.equal(undefined);
    limit.setAddressBans({ maxFailures: 3, banSeconds: 50 });
    const started: string[] = [];
    const stop = limit.onAddressBanned((ban) => started.push(`${ban.address} ${ban.secondsLeft}`));
    for (const ip of ['10.1.0.2', '10.1.1.2']) for (let i = 0; i < 3; i++) limit.failed(ip, `u${i}@h`, 'http_api', 1, t0);
    stop();
    expect(started).to.deep.equal(['10.1.0.2 50', '10.1.1.2 50']);
    expect(limit.refusal('10.1.0.2', undefined, t0)?.retryAfter).to.equal(50);
    expect(limit.addressBans(t0 + 10_000).map((b) => b.address)).to.deep.equal(['10.1.0.2', '10.1.1.2']);
    // 10.1.0.2's ban; 10.1.0.1's failures came while address bans were off, so they were not counted.
    expect(limit.unbanAddresses(parseAddressRange('10.1.0.0/24')!, t0)).to.equal(1);
    expect(limit.refusal('10.1.0.2', undefined, t0)).to.equal(undefined);
    expect(limit.refusal('10.1.1.2', undefined, t0)?.retryAfter).to.equal(50);
    limit.setAddressBans(undefined);
    expect(limit.refusal('10.1.1.2', undefined, t0), 'the module stopped').to.equal(undefined);
  });

  it('takes a ban from another node, keeping a longer one, and tells the other workers', () => {
    const limit = new LoginThrottle(() => settings, quiet);
    limit.setAddressBans({ maxFailures: 3, banSeconds: 50 });
    const told: string[] = [];
    limit.observe((event) => told.push(event.outcome));
    limit.imposeAddressBan({ address: '10.2.0.1', secondsLeft: 30 }, t0);
    limit.imposeAddressBan({ address: '10.2.0.1', secondsLeft: 10 }, t0);
    expect(limit.refusal('10.2.0.1', undefined, t0)?.retryAfter).to.equal(30);
    expect(told).to.deep.equal(['banned', 'banned']);
    expect(limit.refusal('10.2.0.1', undefined, t0 + 30_000)).to.equal(undefined);
  });
});
