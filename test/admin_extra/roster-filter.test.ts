/**
 * The filter grammar of process_rosteritems on its own: alternatives, `any`, globs (`*`, `?`, classes,
 * negation), the SQL wildcards on the SQL store only, host-only patterns, and the errors that name the
 * argument at fault.
 */
import { expect } from 'chai';
import { CommandError, type DbKind } from '@service/kernel';
import { asksOf, parseFilter } from '../../modules/mod_admin_extra/src/roster/filter.js';

const ANY = { subs: 'any', asks: 'any', users: 'any', contacts: 'any' };

function users(pattern: string, store: DbKind = 'sql'): (jid: string) => boolean {
  return parseFilter({ ...ANY, users: pattern }, store).users;
}

function refusal(args: Partial<typeof ANY>): CommandError {
  try {
    parseFilter({ ...ANY, ...args }, 'sql');
  } catch (err) {
    expect(err).to.be.instanceOf(CommandError);
    expect((err as CommandError).kind).to.equal('bad_argument');
    return err as CommandError;
  }
  return expect.fail('expected a bad_argument error');
}

describe('process_rosteritems filter grammar', () => {
  it('reads subscriptions and asks as any or alternatives separated by colons', () => {
    expect([...parseFilter(ANY, 'sql').subscriptions].sort()).to.deep.equal(['both', 'from', 'none', 'to']);
    expect([...parseFilter({ ...ANY, subs: 'to:both' }, 'sql').subscriptions].sort()).to.deep.equal(['both', 'to']);
    expect([...parseFilter({ ...ANY, asks: 'none' }, 'sql').asks]).to.deep.equal(['none']);
    expect([...parseFilter({ ...ANY, asks: 'in:OUT' }, 'sql').asks].sort()).to.deep.equal(['in', 'out']);
    // `any` among alternatives stands for all of them.
    expect(parseFilter({ ...ANY, subs: 'none:any' }, 'sql').subscriptions.size).to.equal(4);
  });

  it('names the argument and the bad word for unknown values and empty alternatives', () => {
    expect(refusal({ subs: 'both:maybe' }).message).to.equal("subs: 'maybe' is not one of any, none, from, to, both");
    expect(refusal({ subs: 'both:maybe' }).argument).to.equal('subs');
    expect(refusal({ asks: 'subscribe' }).message).to.match(/^asks: 'subscribe' is not one of any, none, out, in$/);
    expect(refusal({ asks: 'in::out' }).message).to.match(/asks 'in::out' has an empty alternative/);
    expect(refusal({ users: '' }).argument).to.equal('users');
  });

  it('matches exact JIDs and lists of them, case-insensitively as JIDs are', () => {
    const m = users('Alice@LocalHost:bob@localhost');
    expect(m('alice@localhost')).to.equal(true);
    expect(m('bob@localhost')).to.equal(true);
    expect(m('carol@localhost')).to.equal(false);
    expect(m('alice@example.com')).to.equal(false);
  });

  it('takes globs in either part: *, ?, classes, ranges and negated classes', () => {
    expect(users('*@localhost')('anyone@localhost')).to.equal(true);
    expect(users('*@localhost')('anyone@localhost.org')).to.equal(false);
    expect(users('user?@*')('user1@example.com')).to.equal(true);
    expect(users('user?@*')('user12@example.com')).to.equal(false);
    expect(users('user[13]@localhost')('user3@localhost')).to.equal(true);
    expect(users('user[13]@localhost')('user2@localhost')).to.equal(false);
    expect(users('user[0-4]@localhost')('user4@localhost')).to.equal(true);
    expect(users('user[!0-4]@localhost')('user4@localhost')).to.equal(false);
    expect(users('user[!0-4]@localhost')('user7@localhost')).to.equal(true);
    // Regular-expression characters are plain characters in a glob.
    expect(users('a.b@localhost')('a.b@localhost')).to.equal(true);
    expect(users('a.b@localhost')('axb@localhost')).to.equal(false);
    expect(users('a+(b)@localhost')('a+(b)@localhost')).to.equal(true);
  });

  it('negates a part that starts with !', () => {
    const notAdmin = users('!admin@localhost');
    expect(notAdmin('admin@localhost')).to.equal(false);
    expect(notAdmin('alice@localhost')).to.equal(true);
    expect(notAdmin('alice@example.com')).to.equal(false);
    const elsewhere = users('*@!localhost');
    expect(elsewhere('alice@example.com')).to.equal(true);
    expect(elsewhere('alice@localhost')).to.equal(false);
  });

  it('accepts the SQL wildcards % and _ on the SQL store, and [_] for the underscore itself', () => {
    expect(users('%@localhost')('whoever@localhost')).to.equal(true);
    expect(users('user_@localhost')('user7@localhost')).to.equal(true);
    expect(users('user_@localhost')('user77@localhost')).to.equal(false);
    expect(users('a[_]b@localhost')('a_b@localhost')).to.equal(true);
    expect(users('a[_]b@localhost')('axb@localhost')).to.equal(false);
  });

  it("takes % and _ as ordinary characters on the embedded store, as ejabberd's Mnesia backend does", () => {
    expect(users('john_doe@localhost', 'mnesia')('john_doe@localhost')).to.equal(true);
    expect(users('john_doe@localhost', 'mnesia')('johnxdoe@localhost')).to.equal(false);
    expect(users('%@localhost', 'mnesia')('whoever@localhost')).to.equal(false);
    expect(users('100%@localhost', 'mnesia')('100%@localhost')).to.equal(true);
    // The globs of the Mnesia row still work there, and match _ like any character.
    expect(users('john?doe@localhost', 'mnesia')('john_doe@localhost')).to.equal(true);
    expect(users('*_doe@localhost', 'mnesia')('jane_doe@localhost')).to.equal(true);
    expect(users('*_doe@localhost', 'mnesia')('janexdoe@localhost')).to.equal(false);
    expect(users('a[_]b@localhost', 'mnesia')('a_b@localhost')).to.equal(true);
    expect(users('!john_doe@localhost', 'mnesia')('johnxdoe@localhost')).to.equal(true);
  });

  it('matches a host-only pattern against contacts without a user part, as ejabberd does', () => {
    const contacts = parseFilter({ ...ANY, contacts: 'gw.example.org:*.icq.example.org' }, 'sql').contacts;
    expect(contacts('gw.example.org')).to.equal(true);
    expect(contacts('aim.icq.example.org')).to.equal(true);
    expect(contacts('someone@gw.example.org')).to.equal(false);
    expect(parseFilter({ ...ANY, contacts: '*' }, 'sql').contacts('someone@localhost')).to.equal(false);
    expect(parseFilter({ ...ANY, contacts: '*@*' }, 'sql').contacts('someone@localhost')).to.equal(true);
    expect(parseFilter({ ...ANY, contacts: 'any' }, 'sql').contacts('gw.example.org')).to.equal(true);
  });

  it('refuses malformed JID patterns, naming the argument', () => {
    expect(refusal({ contacts: 'user[ab@localhost' }).message).to.equal("contacts: 'user[ab' has a '[' without its ']'");
    expect(refusal({ users: '@localhost' }).message).to.match(/users: '@localhost' is not a JID pattern/);
    expect(refusal({ users: 'a@b@c' }).argument).to.equal('users');
    expect(refusal({ users: 'a@localhost/phone' }).message).to.match(/has a resource/);
    expect(refusal({ users: 'a[z-a]@localhost' }).message).to.match(/backwards/);
  });

  it('says what a row asks: in, out, both, or none', () => {
    expect(asksOf({ pendingIn: false, pendingOut: false })).to.deep.equal(['none']);
    expect(asksOf({ pendingIn: true, pendingOut: false })).to.deep.equal(['in']);
    expect(asksOf({ pendingIn: false, pendingOut: true })).to.deep.equal(['out']);
    expect(asksOf({ pendingIn: true, pendingOut: true })).to.deep.equal(['out', 'in']);
  });
});
