/**
 * The kernel's native PBKDF2 (@service/pbkdf2) against node:crypto's: the same bytes for every hash SCRAM uses,
 * for passwords shorter and longer than a block, any salt, one round or thousands; bad arguments refused with
 * a TypeError; the work off the event loop. CI builds the addon (it has a compiler), so it must be loaded here.
 * On x86, SHA-1 and SHA-256 run on the SHA extensions (derivations queued together in pairs) or, without them, on
 * AVX-512 or AVX2 vectors (up to eight at once, one per lane): many at once, with mixed hashes and round counts,
 * must each still get its own bytes, on every path this CPU has.
 */
import { expect } from 'chai';
import { pbkdf2Sync, randomBytes, randomInt } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { readFileSync } from 'node:fs';
import { nativePbkdf2, nativePbkdf2Problem, nativePbkdf2Sha, type Pbkdf2Hash } from '@service/pbkdf2';
import { PBKDF2_IMPLEMENTATION, saltPassword } from '../../kernel/src/accounts/scram.js';

const DIGEST_LENGTH: Record<Pbkdf2Hash, number> = { sha1: 20, sha256: 32, sha512: 64 };

const CPU_FLAGS = readFileSync('/proc/cpuinfo', 'utf8').match(/^flags\s*:(.*)$/m)?.[1]?.split(/\s+/) ?? [];
const x64 = process.arch === 'x64';
/** The paths for SHA-1 and SHA-256 this CPU has, fastest first (the addon's own choice is the first). */
const PATHS = [
  ...(x64 && ['sha_ni', 'sse4_1', 'ssse3'].every((flag) => CPU_FLAGS.includes(flag)) ? ['sha-ni'] : []),
  ...(x64 && CPU_FLAGS.includes('avx512f') && CPU_FLAGS.includes('avx512vl') ? ['avx512'] : []),
  ...(x64 && CPU_FLAGS.includes('avx2') ? ['avx2'] : []),
  'openssl',
];

function native(): NonNullable<typeof nativePbkdf2> {
  expect(nativePbkdf2Problem, 'the addon failed to load').to.equal(undefined);
  return nativePbkdf2!;
}

/** Runs `body` (an async function's text, given `addon` and `sleep`) in a process on `path`; returns what it resolves to. */
function onPath<T>(path: string, body: string): T {
  // The path is chosen when the addon loads, so each runs in a process of its own.
  const script = `
    const addon = require(${JSON.stringify(new URL('../../kernel/pbkdf2/build/Release/pbkdf2.node', import.meta.url).pathname)});
    const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
    (async () => { process.stdout.write(JSON.stringify(await (async () => { ${body} })())); })();`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { env: { ...process.env, SERVICE_PBKDF2_SHA: path }, encoding: 'utf8' })) as T;
}

/**
 * Script text for onPath: queues `count` SHA-1 derivations 3 ms apart without awaiting them (as a wave of PLAIN
 * logins does) and sets `spaced` to [batches, derivations] run for those from the `from`th on.
 */
function spacedJobs(count: number, from: number): string {
  return `
    const pending = [];
    let before;
    for (let i = 0; i < ${count}; i++) {
      if (i === ${from}) before = addon.batches(0);
      pending.push(addon.derive(Buffer.from('spaced' + i), Buffer.from('salt'), 4096, 0));
      await sleep(3);
    }
    await Promise.all(pending);
    const after = addon.batches(0);
    const spaced = [after[0] - before[0], after[1] - before[1]];`;
}

describe('native PBKDF2 (@service/pbkdf2)', () => {
  it('is what SCRAM derives with here, with SHA-1 and SHA-256 on the fastest path the CPU has', () => {
    native();
    expect(nativePbkdf2Sha).to.equal(PATHS[0]);
    expect(PBKDF2_IMPLEMENTATION).to.deep.equal({ name: 'native', sha: nativePbkdf2Sha });
  });

  it('matches RFC 6070 (PBKDF2-HMAC-SHA1)', async () => {
    const derive = native();
    const vectors: Array<[string, string, number, string]> = [
      ['password', 'salt', 1, '0c60c80f961f0e71f3a9b524af6012062fe037a6'],
      ['password', 'salt', 2, 'ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957'],
      ['password', 'salt', 4096, '4b007901b765489abead49d926f721d065a429c1'],
    ];
    for (const [password, salt, rounds, hex] of vectors) {
      const out = await derive(Buffer.from(password), Buffer.from(salt), rounds, 'sha1');
      expect(out.toString('hex'), `${password}/${salt}/${rounds}`).to.equal(hex);
    }
  });

  it('gives node:crypto\'s bytes for every hash, password length around the block size, salt and round count', async () => {
    const derive = native();
    for (const hash of ['sha1', 'sha256', 'sha512'] as const) {
      for (const length of [0, 1, 19, 20, 63, 64, 65, 127, 128, 129, 1000]) {
        for (const rounds of [1, 2, 3, 100, 4096]) {
          const password = randomBytes(length);
          const salt = randomBytes((length * 7 + rounds) % 97);
          const expected = pbkdf2Sync(password, salt, rounds, DIGEST_LENGTH[hash], hash);
          const got = await derive(password, salt, rounds, hash);
          expect(got.equals(expected), `${hash}, ${length}-byte password, ${salt.length}-byte salt, ${rounds} rounds`).to.equal(true);
        }
      }
    }
  });

  it('gives each of many concurrent derivations its own bytes, whatever it is queued with', async () => {
    // Several at once are queued together, so SHA-1 ones run in pairs (on SHA-NI): same and different round
    // counts, passwords around the block size, other hashes in between, some alone after the rest.
    const derive = native();
    const hashes = ['sha1', 'sha1', 'sha1', 'sha256', 'sha512'] as const;
    const cases = Array.from({ length: 96 }, (_, i) => ({
      hash: hashes[i % hashes.length]!,
      password: randomBytes([0, 8, 20, 63, 64, 65, 200][i % 7]!),
      salt: randomBytes(randomInt(0, 80)),
      rounds: i % 3 === 0 ? randomInt(1, 3000) : 4096,
    }));
    for (const wave of [cases, cases.slice(0, 3), cases.slice(0, 1)]) {
      const got = await Promise.all(wave.map(({ hash, password, salt, rounds }) => derive(password, salt, rounds, hash)));
      wave.forEach(({ hash, password, salt, rounds }, i) => {
        const expected = pbkdf2Sync(password, salt, rounds, DIGEST_LENGTH[hash], hash);
        expect(got[i]!.equals(expected), `#${i}: ${hash}, ${password.length}-byte password, ${salt.length}-byte salt, ${rounds} rounds`).to.equal(true);
      });
    }
  });

  for (const path of PATHS) {
    it(`gives the same bytes on the ${path} path (SERVICE_PBKDF2_SHA=${path}), alone and many at once`, () => {
      native();
      // Waves of 1, 2, 9 and 40 derivations, so that batches are full, partial and single, with both hashes and
      // several round counts.
      const out = onPath<{ implementation: string; wrong: number }>(path, `
        const { pbkdf2Sync, randomBytes } = require('node:crypto');
        const wave = (n) => Array.from({ length: n }, (_, i) => [randomBytes((i * 5) % 130), randomBytes(i % 17), i % 2 ? 4096 : i % 7 + 1, i % 3 ? 0 : 1]);
        let wrong = 0;
        for (const cases of [wave(1), wave(2), wave(9), wave(40)]) {
          const got = await Promise.all(cases.map(([p, s, r, h]) => addon.derive(p, s, r, h)));
          wrong += cases.filter(([p, s, r, h], i) => !got[i].equals(pbkdf2Sync(p, s, r, h ? 32 : 20, h ? 'sha256' : 'sha1'))).length;
        }
        return { implementation: addon.implementation, wrong };`);
      expect(out).to.deep.equal({ implementation: path, wrong: 0 });
    });
  }

  it('gives each derivation its own bytes when they come one at a time, a little apart, under load', async () => {
    // Under load a lone job on a vector path waits a few milliseconds for a partner: derivations queued 2 ms
    // apart, after a busy start, meet that wait (partners that come in time, and waits that end alone).
    const derive = native();
    const cases = Array.from({ length: 24 }, (_, i) => ({ password: randomBytes(i + 3), salt: randomBytes(16), rounds: i % 4 === 3 ? 1000 : 4096 }));
    const pending: Array<Promise<Buffer>> = [];
    for (const { password, salt, rounds } of cases) {
      pending.push(derive(password, salt, rounds, 'sha1'));
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    const got = await Promise.all(pending);
    cases.forEach(({ password, salt, rounds }, i) => {
      expect(got[i]!.equals(pbkdf2Sync(password, salt, rounds, 20, 'sha1')), `#${i}`).to.equal(true);
    });
  });

  for (const path of PATHS.filter((p) => p === 'avx512' || p === 'avx2')) {
    it(`gathers derivations that come a few milliseconds apart into batches on the ${path} path`, () => {
      native();
      // PLAIN logins against stored SCRAM keys come one at a time: a job waits for partners while jobs come often,
      // and eight in the lanes cost what one does. A wait for the first partner only gave batches of one to two.
      // The first few jobs of a wave run alone while the mean gap between jobs falls: counted after ten.
      const [pieces, derived] = onPath<[number, number]>(path, `${spacedJobs(70, 10)}
        return spaced;`);
      expect(derived).to.be.within(60, 70);
      expect(derived / pieces, `${derived} derivations in ${pieces} batches`).to.be.at.least(2.5);
    });
  }

  it('runs a lone derivation at once when derivations come seldom, on every path', () => {
    native();
    // The wait for partners is for jobs that come often: a login now and then must not wait the 16 ms.
    for (const path of PATHS) {
      const walls = onPath<number[]>(path, `
        const walls = [];
        for (let i = 0; i < 4; i++) {
          await sleep(150);
          const start = performance.now();
          await addon.derive(Buffer.from('pw' + i), Buffer.from('salt'), 4096, 0);
          walls.push(performance.now() - start);
        }
        return walls;`);
      expect(Math.min(...walls), `${path}: ${walls.map((w) => w.toFixed(1)).join(', ')} ms`).to.be.below(10);
    }
  });

  it('runs derivations that come one after another without waiting for partners, on every path', () => {
    native();
    // A script's check_password or register loop awaits each derivation before the next: they come often but never
    // together, so a wait for partners finds none. Each such derivation waited its full 14 ms on the vector paths
    // (AVX-512 and AVX2 on an AMD EPYC: 14.1 ms each in a loop, 0.6 ms without the wait). Waits that end alone now
    // let more and more lone jobs run at once; jobs queued 3 ms apart without awaiting each other (a wave of PLAIN
    // logins) gather into batches again once a wait finds partners.
    for (const path of PATHS) {
      const [loop, pieces, derived] = onPath<[number, number, number]>(path, `
        const start = performance.now();
        for (let i = 0; i < 40; i++) await addon.derive(Buffer.from('pw' + i), Buffer.from('salt'), 4096, 0);
        const loop = (performance.now() - start) / 40;
        ${spacedJobs(100, 40)}
        return [loop, ...spaced];`);
      expect(loop, `${path}: ${loop.toFixed(2)} ms per derivation in a loop`).to.be.below(5);
      if (path === 'avx512' || path === 'avx2') expect(derived / pieces, `${path}: ${derived} derivations in ${pieces} batches`).to.be.at.least(2.5);
    }
  });

  it('derives the SaltedPassword of SASLprepped passwords as node:crypto does', async () => {
    const salt = randomBytes(16);
    for (const password of ['pencil', 'p\u00e4ssw\u00f6rd', 'I\u00ADX', '\u2168', '\u{1F511} key']) {
      const got = await saltPassword(password, salt, 4096, 'sha256');
      const expected = pbkdf2Sync(password.normalize('NFKC').replace(/\u00AD/g, ''), salt, 4096, 32, 'sha256');
      expect(got.equals(expected), JSON.stringify(password)).to.equal(true);
    }
  });

  it('refuses bad arguments with a TypeError, before any work', () => {
    const derive = native();
    const calls: Array<() => unknown> = [
      () => derive('password' as unknown as Buffer, Buffer.alloc(16), 1, 'sha1'),
      () => derive(Buffer.alloc(8), [1, 2] as unknown as Buffer, 1, 'sha1'),
      () => derive(Buffer.alloc(8), Buffer.alloc(16), 0, 'sha1'),
      () => derive(Buffer.alloc(8), Buffer.alloc(16), -5, 'sha1'),
      () => derive(Buffer.alloc(8), Buffer.alloc(16), 1.5, 'sha1'),
      () => derive(Buffer.alloc(8), Buffer.alloc(16), 2 ** 32 + 1, 'sha1'),
      () => derive(Buffer.alloc(8), Buffer.alloc(16), Number.NaN, 'sha1'),
    ];
    for (const call of calls) expect(call).to.throw(TypeError);
  });

  it('rejects an unknown hash', async () => {
    const derive = native();
    const outcome = await derive(Buffer.alloc(8), Buffer.alloc(16), 1, 'md5' as Pbkdf2Hash).then(
      () => 'resolved',
      (err: Error) => `${err.name}: ${err.message}`,
    );
    expect(outcome).to.equal('TypeError: unknown PBKDF2 hash md5');
  });

  it('works off the event loop: timers fire while derivations run', async () => {
    const derive = native();
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const started = performance.now();
    await Promise.all(Array.from({ length: 64 }, () => derive(Buffer.from('benchpass'), randomBytes(16), 20_000, 'sha256')));
    const elapsed = performance.now() - started;
    clearInterval(timer);
    // 64 × 20 000 rounds take far longer than a few milliseconds; the loop kept turning meanwhile.
    expect(elapsed).to.be.greaterThan(20);
    expect(ticks).to.be.greaterThan(elapsed / 20);
  });

  it('spreads a burst over more than one pool thread on every path', function () {
    native();
    if (availableParallelism() < 2) this.skip();
    // A burst of 64 needs full batches beside the running one, so a second thread starts: the process then uses
    // more CPU time than wall time. A cap of one piece of work per hash had bulk derivations on one core.
    const body = `
      const burst = () => Promise.all(Array.from({ length: 64 }, (_, i) => addon.derive(Buffer.from('pw' + i), Buffer.from('salt'), 20000, 0)));
      await burst();
      const wall = performance.now(), cpu = process.cpuUsage();
      await burst();
      const used = process.cpuUsage(cpu);
      return { wall: performance.now() - wall, cpu: (used.user + used.system) / 1000 };`;
    // The best of three tries, so that another process busy for a moment does not fail it (one core gives 0.9).
    for (const path of PATHS) {
      let best = { wall: 1, cpu: 0 };
      for (let attempt = 0; attempt < 3 && best.cpu / best.wall <= 1.2; attempt++) {
        const run = onPath<{ wall: number; cpu: number }>(path, body);
        if (run.cpu / run.wall > best.cpu / best.wall) best = run;
      }
      expect(best.cpu / best.wall, `${path}: ${best.cpu.toFixed(0)} ms of CPU in ${best.wall.toFixed(0)} ms`).to.be.greaterThan(1.2);
    }
  });
});
