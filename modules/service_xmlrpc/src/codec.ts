/**
 * XML-RPC (xmlrpc.com spec) on the hardened parser: a methodCall in, a methodResponse or a fault out. Strict
 * about structure, with errors that name what is wrong; the values map to JSON-like values so that the
 * command bus validates them as for every frontend.
 */
import { XmlElement, x } from '@service/plugin-api';
import { ParseError, parseElement, type StreamParserLimits } from '@service/plugin-api';

export type XmlRpcValue = string | number | boolean | null | XmlRpcValue[] | { [name: string]: XmlRpcValue } | Buffer | Date;

export class XmlRpcDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'XmlRpcDecodeError';
  }
}

export interface MethodCall {
  readonly method: string;
  readonly params: XmlRpcValue[];
}

const INT = /^[+-]?\d{1,10}$/;

export function decodeMethodCall(text: string, limits: StreamParserLimits): MethodCall {
  let root: XmlElement;
  try {
    root = parseElement(text, limits);
  } catch (err) {
    if (!(err instanceof ParseError)) throw new XmlRpcDecodeError(String(err));
    // The parser is XMPP's and says so in places; what it refuses (DTDs, entities, comments, depth, size) is
    // refused here for the same reasons.
    const reason = err.message.replace(/ in XMPP\b/, '');
    throw new XmlRpcDecodeError(err.condition === 'not-well-formed' || err.condition === 'bad-format' ? `the request is not valid XML: ${reason}` : `the request's XML is refused: ${reason}`);
  }
  if (root.name !== 'methodCall') throw new XmlRpcDecodeError(`expected <methodCall>, got <${root.name}>`);
  const name = root.getChild('methodName')?.text().trim();
  if (!name) throw new XmlRpcDecodeError('<methodCall> has no <methodName>');
  const params = root.getChild('params');
  return {
    method: name,
    params: params ? params.getChildren('param').map((p, i) => decodeValue(p.getChild('value'), `param ${i + 1}`)) : [],
  };
}

function decodeValue(value: XmlElement | undefined, where: string): XmlRpcValue {
  if (!value) throw new XmlRpcDecodeError(`${where} has no <value>`);
  const typed = value.elements();
  if (typed.length === 0) return value.text();
  if (typed.length > 1) throw new XmlRpcDecodeError(`${where}: a <value> holds one typed element`);
  const element = typed[0]!;
  const text = element.text().trim();
  switch (element.name) {
    case 'string':
      return element.text();
    case 'int':
    case 'i4':
    case 'i8': {
      if (!INT.test(text) && !(element.name === 'i8' && /^[+-]?\d{1,19}$/.test(text))) throw new XmlRpcDecodeError(`${where}: <${element.name}> holds ${JSON.stringify(text)}, not an integer`);
      const n = Number(text);
      if (!Number.isSafeInteger(n)) throw new XmlRpcDecodeError(`${where}: integer ${text} is too large`);
      return n;
    }
    case 'boolean':
      if (text !== '0' && text !== '1') throw new XmlRpcDecodeError(`${where}: <boolean> holds ${JSON.stringify(text)}, expected 0 or 1`);
      return text === '1';
    case 'double': {
      const n = Number(text);
      if (text === '' || !Number.isFinite(n)) throw new XmlRpcDecodeError(`${where}: <double> holds ${JSON.stringify(text)}`);
      return n;
    }
    case 'nil':
      return null;
    case 'base64':
      return Buffer.from(text, 'base64');
    case 'dateTime.iso8601':
      return new Date(text.replace(/^(\d{4})(\d{2})(\d{2})T/, '$1-$2-$3T'));
    case 'array': {
      const data = element.getChild('data');
      if (!data) throw new XmlRpcDecodeError(`${where}: <array> has no <data>`);
      return data.getChildren('value').map((v, i) => decodeValue(v, `${where}[${i}]`));
    }
    case 'struct': {
      const out: Record<string, XmlRpcValue> = {};
      for (const member of element.getChildren('member')) {
        const name = member.getChild('name')?.text();
        if (name === undefined) throw new XmlRpcDecodeError(`${where}: a struct <member> has no <name>`);
        if (Object.hasOwn(out, name)) throw new XmlRpcDecodeError(`${where}: struct member '${name}' appears twice`);
        // Defined, not assigned: `out['__proto__'] = v` would make v the struct's prototype, so its members
        // would be read through it (credentials included) while the member itself vanished from the struct.
        Object.defineProperty(out, name, { value: decodeValue(member.getChild('value'), `${where}.${name}`), enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
    default:
      throw new XmlRpcDecodeError(`${where}: unknown XML-RPC type <${element.name}>`);
  }
}

export function encodeValue(value: XmlRpcValue): XmlElement {
  if (value === null) return x('value', {}, x('nil'));
  if (typeof value === 'string') return x('value', {}, x('string', {}, value));
  if (typeof value === 'boolean') return x('value', {}, x('boolean', {}, value ? '1' : '0'));
  if (typeof value === 'number') return x('value', {}, Number.isInteger(value) ? x('int', {}, String(value)) : x('double', {}, String(value)));
  if (Buffer.isBuffer(value)) return x('value', {}, x('base64', {}, value.toString('base64')));
  if (value instanceof Date) return x('value', {}, x('dateTime.iso8601', {}, value.toISOString()));
  if (Array.isArray(value)) return x('value', {}, x('array', {}, x('data', {}, ...value.map(encodeValue))));
  return x(
    'value',
    {},
    x('struct', {}, ...Object.entries(value).map(([name, member]) => x('member', {}, x('name', {}, name), encodeValue(member)))),
  );
}

const DECLARATION = "<?xml version='1.0' encoding='UTF-8'?>\n";

export function encodeResponse(value: XmlRpcValue): string {
  return DECLARATION + x('methodResponse', {}, x('params', {}, x('param', {}, encodeValue(value)))).toString();
}

export function encodeFault(code: number, message: string): string {
  return DECLARATION + x('methodResponse', {}, x('fault', {}, encodeValue({ faultCode: code, faultString: message }))).toString();
}
