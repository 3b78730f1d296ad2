/**
 * The reader of Prosody's stored Lua data (kernel/src/data/imports/lua-data.ts): every string escape Lua has
 * (decimal bytes decoded as UTF-8, \x, \u{}, \z, escaped newlines), long strings, nesting of tables with
 * positional, named and bracketed keys, .list files of item() calls, and refusals that name the file, line
 * and column: anything that is not data (a function call, a variable), an unfinished string or table, too
 * deep a nesting. Nothing is ever evaluated.
 */
import { expect } from 'chai';
import { LuaSyntaxError, LuaTable, parseLuaList, parseLuaReturn } from '../../kernel/src/data/imports/lua-data.js';

const table = (v: unknown) => {
  expect(v).to.be.instanceOf(LuaTable);
  return v as LuaTable;
};

describe('Lua data reader (Prosody file storage)', () => {
  it('reads every string escape, with decimal bytes as UTF-8', () => {
    const v = table(
      parseLuaReturn(String.raw`return { ["a"] = "tab\tnl\nq\"s\'b\\", ["b"] = "\195\188n\195\175", ["c"] = "\x41\u{1F600}\z
            end", ["d"] = 'single "quoted"', ["e"] = "line\
two", ["f"] = "\0\65\066", ["g"] = "bell\a\b\f\r\v" };`),
    );
    expect(v.get('a')).to.equal('tab\tnl\nq"s\'b\\');
    expect(v.get('b')).to.equal('ünï');
    expect(v.get('c')).to.equal('A😀end');
    expect(v.get('d')).to.equal('single "quoted"');
    expect(v.get('e')).to.equal('line\ntwo');
    expect(v.get('f')).to.equal('\0AB');
    expect(v.get('g')).to.equal('bell\x07\b\f\r\v');
  });

  it('reads long strings and comments', () => {
    const v = table(parseLuaReturn('-- a comment\n--[[ a long\ncomment ]]\nreturn { [[\nfirst]], [==[with ]] inside]==], "x" --[[ inline ]] };'));
    expect(v.array).to.deep.equal(['first', 'with ]] inside', 'x']);
  });

  it('reads nested tables with positional, named, bracketed, boolean and numeric keys', () => {
    const v = table(
      parseLuaReturn(`return {
        [false] = { ["version"] = 2; ["pending"] = {}; };
        ["romeo@example.org"] = { ["groups"] = { ["Friends"] = true; }; ["name"] = "Romeo"; ["subscription"] = "both"; };
        name = "stanza"; attr = { xmlns = "jabber:client" };
        { "text"; { name = "b"; attr = {}; "deep" } };
        [1.5] = -3; [10] = 0x1F; count = 1e3; nothing = nil;
      };`),
    );
    expect(table(v.get(false)).get('version')).to.equal(2);
    const romeo = table(v.get('romeo@example.org'));
    expect(table(romeo.get('groups')).get('Friends')).to.equal(true);
    expect(romeo.get('subscription')).to.equal('both');
    expect(v.get('name')).to.equal('stanza');
    const first = table(v.array[0]);
    expect(first.array[0]).to.equal('text');
    expect(table(first.array[1]).array).to.deep.equal(['deep']);
    expect(v.get(1.5)).to.equal(-3);
    expect(v.get(10)).to.equal(31);
    expect(v.get('count')).to.equal(1000);
    expect(v.hash.has('nothing')).to.equal(false);
  });

  it('reads .list files of item() calls, and empty files', () => {
    const items = parseLuaList('item({ ["key"] = "a"; ["when"] = 1795767901; name = "message"; attr = {}; });\nitem({ key = "b" });\n');
    expect(items.map((i) => table(i).get('key'))).to.deep.equal(['a', 'b']);
    expect(parseLuaList('')).to.deep.equal([]);
    expect(parseLuaReturn('')).to.equal(null);
    expect(parseLuaReturn('return nil;')).to.equal(null);
  });

  const refusal = (text: string, list = false) => {
    try {
      if (list) parseLuaList(text, 'x.list');
      else parseLuaReturn(text, 'x.dat');
    } catch (err) {
      expect(err).to.be.instanceOf(LuaSyntaxError);
      return (err as Error).message;
    }
    throw new Error(`accepted: ${text}`);
  };

  it('refuses what is not data, naming the file, line and column', () => {
    expect(refusal('return {\n  ["a"] = os.execute("rm -rf /");\n}')).to.equal("x.dat:2:11: 'os' is not data (only tables, strings, numbers, booleans and nil are read)");
    expect(refusal('return {\n\t["a"] = "unfinished;\n};')).to.match(/^x\.dat:2:10: unfinished string$/);
    expect(refusal('return { ["a"] = 1')).to.match(/^x\.dat:1:\d+: unfinished table: expected '}'$/);
    expect(refusal('return { ["a"] = 1 } extra')).to.match(/unexpected text after the returned value/);
    expect(refusal('return { "\\q" }')).to.match(/invalid escape '\\q'/);
    expect(refusal('return { "\\300" }')).to.match(/larger than 255/);
    expect(refusal('return { [nil] = 1 }')).to.match(/may not be nil/);
    expect(refusal('print("hi")')).to.match(/^x\.dat:1:1: expected 'return'$/);
    expect(refusal('item({});\nevil({});', true)).to.match(/^x\.list:2:1: expected 'item\('/);
    expect(refusal(`return ${'{'.repeat(300)}${'}'.repeat(300)}`)).to.match(/nested deeper than 200/);
  });
});
