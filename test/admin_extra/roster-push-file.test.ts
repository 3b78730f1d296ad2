/**
 * The roster file of push_roster and push_roster_all on its own: ejabberd's Erlang terms (binaries,
 * strings, escapes, comments) and JSON (arrays or objects), and malformed files reported with their line.
 */
import { expect } from 'chai';
import { parseErlangRoster, parseJsonRoster, PushFileError } from '../../modules/mod_admin_extra/src/roster/push-file.js';

function failure(parse: () => unknown): PushFileError {
  try {
    parse();
  } catch (err) {
    expect(err).to.be.instanceOf(PushFileError);
    return err as PushFileError;
  }
  return expect.fail('expected a PushFileError');
}

describe('push_roster file format', () => {
  describe("ejabberd's Erlang terms", () => {
    it('reads the documented example', () => {
      expect(parseErlangRoster('[{<<"user1">>,<<"localhost">>,<<"Workers">>,<<"User 1">>}].\n')).to.deep.equal([
        { user: 'user1', host: 'localhost', group: 'Workers', nick: 'User 1', line: 1 },
      ]);
    });

    it('reads strings, /utf8 binaries, empty binaries, comments, adjacent strings and escapes, with lines', () => {
      const text = [
        '%% Template roster',
        '[ {"user1", "localhost", "Workers", "User 1"}, % first',
        '  {<<"zoë"/utf8>>, <<"localhost">>, <<>>, <<"Zo", "ë">>},',
        '  {"user3", "localhost", "Team " "B", "Tab\\there \\"quoted\\" \\x{263A} \\101"}',
        '].',
      ].join('\n');
      expect(parseErlangRoster(text)).to.deep.equal([
        { user: 'user1', host: 'localhost', group: 'Workers', nick: 'User 1', line: 2 },
        { user: 'zoë', host: 'localhost', group: '', nick: 'Zoë', line: 3 },
        { user: 'user3', host: 'localhost', group: 'Team B', nick: 'Tab\there "quoted" ☺ A', line: 4 },
      ]);
    });

    it('reads an empty list', () => {
      expect(parseErlangRoster('[].')).to.deep.equal([]);
    });

    it('reports what is wrong and on which line', () => {
      expect(failure(() => parseErlangRoster('[{"a","localhost","G","N"}]')).message).to.match(/expected '\.' after the list/);
      const short = failure(() => parseErlangRoster('[\n{"a","localhost","G","N"},\n{"b","localhost","G"}].'));
      expect(short.line).to.equal(3);
      expect(short.message).to.equal('a tuple has 3 elements; it needs 4: {User, Server, Group, Nick}');
      const open = failure(() => parseErlangRoster('[{"a","localhost","G",\n"N}].'));
      expect(open.line).to.equal(2);
      expect(open.message).to.match(/string is not closed/);
      expect(failure(() => parseErlangRoster('[{user1,"localhost","G","N"}].')).message).to.match(/expected a text \(<<"…">> or "…"\), found a name$/);
      expect(failure(() => parseErlangRoster('{"a","localhost","G","N"}.')).message).to.match(/expected a list/);
      expect(failure(() => parseErlangRoster('[].\n[].')).line).to.equal(2);
      expect(failure(() => parseErlangRoster('[{<<"a"/latin1>>,"h","g","n"}].')).message).to.match(/only \/utf8/);
    });
  });

  it('never quotes the words or numbers of a file that is not a roster file (it can be any file the server reads)', () => {
    for (const parse of [parseErlangRoster, parseJsonRoster]) {
      const message = failure(() => parse('root:x:0:0:s3cret:/root:/bin/sh\n')).message;
      expect(message).to.not.match(/root|s3cret|bin/);
      expect(message).to.match(/found a name$/);
    }
    expect(failure(() => parseErlangRoster('[{<<"a">>, 42')).message).to.match(/found a number$/);
  });

  describe('JSON', () => {
    it('reads arrays and objects, group and nick optional in objects', () => {
      const text = '[\n  ["user1", "localhost", "Workers", "User 1"],\n  {"user": "user2", "host": "localhost", "nick": "Two \\u263a"},\n  {"host": "example.com", "user": "x"}\n]';
      expect(parseJsonRoster(text)).to.deep.equal([
        { user: 'user1', host: 'localhost', group: 'Workers', nick: 'User 1', line: 2 },
        { user: 'user2', host: 'localhost', group: '', nick: 'Two ☺', line: 3 },
        { user: 'x', host: 'example.com', group: '', nick: '', line: 4 },
      ]);
    });

    it('reports what is wrong and on which line', () => {
      const typo = failure(() => parseJsonRoster('[\n{"user": "a", "host": "h"},\n{"user": "b", "hots": "h"}\n]'));
      expect(typo.line).to.equal(3);
      expect(typo.message).to.match(/unknown field 'hots'/);
      expect(failure(() => parseJsonRoster('[["a", "h", "g"]]')).message).to.match(/3 elements; it needs 4/);
      expect(failure(() => parseJsonRoster('[["a", "h", "g", 4]]')).message).to.equal('expected a string, an array or an object, found a number');
      expect(failure(() => parseJsonRoster('[["a", "h", "g", ["n"]]]')).message).to.equal('nick must be a string');
      expect(failure(() => parseJsonRoster('[\n["a", "h", "g", "n"]\n')).message).to.match(/end of the file/);
      expect(failure(() => parseJsonRoster('{"user": "a"}')).message).to.match(/must hold an array/);
      expect(failure(() => parseJsonRoster('[{"user": "a"}]')).message).to.match(/needs at least user and host/);
    });
  });
});
