/**
 * A small XML-RPC client for tests: values encoded and decoded as the spec's methodCall/methodResponse, a
 * call with any params, and the administrator form (admin's password and `admin: true`, then the arguments).
 */
import { parseElement, type XmlElement } from '@service/kernel';
import { request, type TestServer } from './server.js';

export type XmlRpcValue = string | number | boolean | XmlRpcValue[] | { [k: string]: XmlRpcValue };

export interface XmlRpcFault {
  faultCode: number;
  faultString: string;
}

export interface XmlRpcAnswer {
  status: number;
  contentType: string | null;
  result?: any;
  fault?: XmlRpcFault;
}

export function encodeXmlRpc(value: XmlRpcValue): string {
  if (typeof value === 'string') return `<value><string>${value.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</string></value>`;
  if (typeof value === 'number') return `<value><int>${value}</int></value>`;
  if (typeof value === 'boolean') return `<value><boolean>${value ? 1 : 0}</boolean></value>`;
  if (Array.isArray(value)) return `<value><array><data>${value.map(encodeXmlRpc).join('')}</data></array></value>`;
  return `<value><struct>${Object.entries(value).map(([k, v]) => `<member><name>${k}</name>${encodeXmlRpc(v)}</member>`).join('')}</struct></value>`;
}

export function decodeXmlRpc(value: XmlElement): XmlRpcValue {
  const typed = value.elements()[0];
  if (!typed) return value.text();
  switch (typed.name) {
    case 'string':
      return typed.text();
    case 'int':
    case 'i4':
      return Number(typed.text());
    case 'boolean':
      return typed.text() === '1';
    case 'array':
      return typed.getChild('data')!.getChildren('value').map(decodeXmlRpc);
    case 'struct':
      return Object.fromEntries(typed.getChildren('member').map((m) => [m.getChildText('name')!, decodeXmlRpc(m.getChild('value')!)]));
    default:
      throw new Error(`unexpected XML-RPC value <${typed.name}>`);
  }
}

/** A methodCall to `url`: the HTTP status, and the decoded result or fault. */
export async function xmlrpcCall(url: string, method: string, ...params: XmlRpcValue[]): Promise<XmlRpcAnswer> {
  const body = `<?xml version="1.0"?><methodCall><methodName>${method}</methodName><params>${params.map((p) => `<param>${encodeXmlRpc(p)}</param>`).join('')}</params></methodCall>`;
  return xmlrpcPost(url, body);
}

/** A raw body POSTed to `url` as text/xml: the HTTP status, and the decoded result or fault. */
export async function xmlrpcPost(url: string, body: string | Buffer): Promise<XmlRpcAnswer> {
  const res = await request(url, { method: 'POST', headers: { 'content-type': 'text/xml' }, body });
  const response = parseElement(res.text);
  const fault = response.getChild('fault');
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    ...(fault ? { fault: decodeXmlRpc(fault.getChild('value')!) as unknown as XmlRpcFault } : { result: decodeXmlRpc(response.getChild('params')!.getChild('param')!.getChild('value')!) }),
  };
}

export function xmlrpcUrl(t: TestServer): string {
  return `http://127.0.0.1:${t.server.portOf('service_xmlrpc')}/`;
}

/** The administrator form: admin@localhost's password with `admin: true`, then the command's arguments. */
export async function xmlrpcAsAdmin(t: TestServer, method: string, args: Record<string, XmlRpcValue>): Promise<XmlRpcAnswer> {
  const admin = { user: 'admin', server: 'localhost', password: 'adminpass', admin: true };
  return xmlrpcCall(xmlrpcUrl(t), method, admin, args);
}
