/**
 * The reader of Erlang terms as ejabberd.cfg writes them (kernel/src/data/convert/erlang-terms.ts): atoms
 * bare and quoted, strings with escapes (adjacent ones joined), binaries, integers in every notation, floats,
 * tuples, lists and proplists, `[H | T]`, maps, `%` comments, the line each term starts on; and refusals that
 * name the file, line and column (a missing dot, a variable, an unfinished string).
 */
import { expect } from 'chai';
import { ErlangSyntaxError, formatTerm, lineOf, parseErlangTerms, type ErlTerm } from '../../kernel/src/data/convert/erlang-terms.js';

const one = (text: string): ErlTerm => {
  const terms = parseErlangTerms(text);
  expect(terms).to.have.length(1);
  return terms[0]!.term;
};

describe('Erlang term reader (ejabberd.cfg)', () => {
  it('reads atoms, strings, binaries and numbers', () => {
    expect(one('hello_World@x.')).to.deep.equal({ kind: 'atom', value: 'hello_World@x' });
    expect(one("'Quoted atom\\n'.")).to.deep.equal({ kind: 'atom', value: 'Quoted atom\n' });
    expect(one('"tab\\t \\"q\\" \\\\ \\101 \\x41 \\x{1F600} \\s" " joined".')).to.deep.equal({ kind: 'string', value: 'tab\t "q" \\ A A 😀   joined' });
    expect(one('<<"bin", 65, "ary"/utf8>>.')).to.deep.equal({ kind: 'binary', value: 'binAary' });
    expect(one('<<>>.')).to.deep.equal({ kind: 'binary', value: '' });
    expect(one('-42.')).to.deep.equal({ kind: 'integer', value: -42 });
    expect(one('16#FF.')).to.deep.equal({ kind: 'integer', value: 255 });
    expect(one('1_000_000.')).to.deep.equal({ kind: 'integer', value: 1000000 });
    expect(one('$a.')).to.deep.equal({ kind: 'integer', value: 97 });
    expect(one('2.5e3.')).to.deep.equal({ kind: 'float', value: 2500 });
  });

  it('reads tuples, lists, proplists, [H | T] and maps, nested', () => {
    const listen = one('{listen, [{5222, ejabberd_c2s, [{access, c2s}, starttls, {certfile, "/etc/x.pem"}]}, {{5280, {127,0,0,1}}, ejabberd_http, []}]}.');
    expect(formatTerm(listen)).to.equal('{listen, [{5222, ejabberd_c2s, [{access, c2s}, starttls, {certfile, "/etc/x.pem"}]}, {{5280, {127, 0, 0, 1}}, ejabberd_http, []}]}');
    expect(formatTerm(one('[a, b | [c]].'))).to.equal('[a, b, c]');
    expect(formatTerm(one('#{a => 1, "b" => [x]}.'))).to.equal('#{a => 1, "b" => [x]}');
    expect(one('{}.')).to.deep.equal({ kind: 'tuple', items: [] });
  });

  it('reads a file of terms with comments, each with its line', () => {
    const terms = parseErlangTerms('% comment\n{hosts, ["a.example"]}. % trailing\n\n{acl, admin,\n  {user, "root", "a.example"}}.\noverride_acls.\n');
    expect(terms.map((t) => t.line)).to.deep.equal([2, 4, 6]);
    const acl = terms[1]!.term as Extract<ErlTerm, { kind: 'tuple' }>;
    expect(lineOf(acl.items[2]!)).to.equal(5);
  });

  const refusal = (text: string) => {
    try {
      parseErlangTerms(text, 'e.cfg');
    } catch (err) {
      expect(err).to.be.instanceOf(ErlangSyntaxError);
      return (err as Error).message;
    }
    throw new Error(`accepted: ${text}`);
  };

  it('refuses bad syntax, naming the file, line and column', () => {
    expect(refusal('{hosts, ["a"]}\n{loglevel, 4}.')).to.equal("e.cfg:2:1: expected '.' after the term that starts at line 1");
    expect(refusal('{acl, admin, User}.')).to.match(/^e\.cfg:1:14: a variable \('User'\) is not a term/);
    expect(refusal('{hosts, ["a\n}.')).to.match(/^e\.cfg:1:10: unfinished string$/);
    expect(refusal('{a, b.')).to.match(/^e\.cfg:1:6: expected ',' or '}', found '\.'$/);
    expect(refusal('{a, 36#ZZ, 99#1}.')).to.match(/base 99 is not 2 to 36/);
    expect(refusal('[a | b].')).to.match(/improper list/);
    expect(refusal(`${'['.repeat(300)}${']'.repeat(300)}.`)).to.match(/nested deeper than 200/);
  });
});
