/**
 * The embedded database's commands on a server whose SQL database is MariaDB (issue 19): they cover only the
 * embedded store (here vCards, db_type: mnesia), and every result says the SQL database is not covered and to
 * use mysqldump; a backup restores the embedded store while accounts keep being registered in MariaDB, and
 * leaves MariaDB alone.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { ok } from '../support/admin-api.js';
import { testDatabase } from '../support/databases.js';
import { serverSqlConfig, TestServer } from '../support/server.js';
import { login, stopAll, xml, xmppConfig, type Client } from '../support/xmpp.js';
import { liveState, readContainer, registrationLoad } from './support-embedded.js';

const NOT_COVERED = /the SQL database \(mysql '[^']+' at 127\.0\.0\.1\) is not covered: back it up with mysqldump/;

describe('embedded database commands with MariaDB as the SQL database', function () {
  this.timeout(120_000);
  const database = testDatabase('mysql');
  let t: TestServer;
  let alice: Client | undefined;

  before(async () => {
    const settings = await database.settings('/tmp');
    t = await TestServer.start({ ...xmppConfig({ mod_vcard: { db_type: 'mnesia' } }), ...serverSqlConfig(settings) });
    await t.bootstrapAdmin();
    await t.register('alice', 'localhost', 'alice-pw');
  });
  after(async () => {
    await stopAll(alice);
    await t?.stop();
    await database.cleanup();
  });

  it('backup, mnesia_info and restore cover the embedded store only, and say so', async () => {
    alice = await login(t, { user: 'alice', password: 'alice-pw', resource: 'a' });
    await alice.iqCaller.request(xml('iq', { type: 'set' }, xml('vCard', { xmlns: 'vcard-temp' }, xml('FN', {}, 'Alice Liddell'))));
    const file = join(t.dir, 'embedded.backup');
    expect(await ok(t, 'backup', { file })).to.match(/^Backup of mnesia \(\d+ tables, \d+ rows\) written to /).and.match(NOT_COVERED);
    const { manifest } = await readContainer(file);
    expect(manifest.parts.map((p) => p.store)).to.deep.equal(['mnesia']);
    expect(await ok(t, 'mnesia_info', {})).to.match(NOT_COVERED).and.include('mnesia store: ');
    const saved = await liveState(t.server.services.storage.db('mnesia'));
    await alice.iqCaller.request(xml('iq', { type: 'set' }, xml('vCard', { xmlns: 'vcard-temp' }, xml('FN', {}, 'Changed'))));
    const load = registrationLoad(t, 'my');
    expect(await ok(t, 'restore', { file })).to.match(/^Restored mnesia /);
    const registered = await load.stop();
    expect(await liveState(t.server.services.storage.db('mnesia'))).to.deep.equal(saved);
    // MariaDB was not touched: the load's accounts are all there.
    const users = (await ok(t, 'registered_users', { host: 'localhost' })) as string[];
    expect(users).to.include.members(registered.map((r) => r.user));
    const vcard = await alice.iqCaller.request(xml('iq', { type: 'get' }, xml('vCard', { xmlns: 'vcard-temp' })));
    expect(vcard.getChild('vCard', 'vcard-temp')!.getChildText('FN')).to.equal('Alice Liddell');
  });
});
