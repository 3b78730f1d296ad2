/**
 * Writes one XEP-0227 file as a stream: opened as `<name>.part` (mode 0600: it holds password keys), written
 * a user at a time through a small buffer, and renamed to its name only when the whole export succeeded
 * (`commit`); `discard` removes it. An export that fails leaves no file behind.
 */
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { escapeAttr, toStoredXml, type XmlElement } from '@service/plugin-api';
import { NS_PIE, NS_XINCLUDE } from './reader.js';

const FLUSH_AT = 64 * 1024;

export class PiefxisWriter {
  #buffer = '';
  #closed = false;

  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
  ) {}

  /** Creates `<path>.part`; fails if it exists. */
  static async create(path: string): Promise<PiefxisWriter> {
    const handle = await open(`${path}.part`, 'wx', 0o600);
    const writer = new PiefxisWriter(path, handle);
    writer.#buffer = `<?xml version='1.0' encoding='UTF-8'?>\n`;
    return writer;
  }

  async write(text: string): Promise<void> {
    this.#buffer += text;
    if (this.#buffer.length >= FLUSH_AT) await this.#flush();
  }

  async openServerData(): Promise<void> {
    await this.write(`<server-data xmlns='${NS_PIE}' xmlns:xi='${NS_XINCLUDE}'>\n`);
  }

  async closeServerData(): Promise<void> {
    await this.write(`</server-data>\n`);
  }

  async include(href: string): Promise<void> {
    await this.write(`<xi:include href='${escapeAttr(href)}'/>\n`);
  }

  async openHost(jid: string): Promise<void> {
    await this.write(`<host jid='${escapeAttr(jid)}'>\n`);
  }

  async closeHost(): Promise<void> {
    await this.write(`</host>\n`);
  }

  /** One `<user>` with its password attribute (when stored in plain) and its elements. */
  async user(name: string, password: string | undefined, elements: readonly XmlElement[]): Promise<void> {
    let out = `<user name='${escapeAttr(name)}'${password !== undefined ? ` password='${escapeAttr(password)}'` : ''}`;
    if (!elements.length) out += '/>\n';
    else {
      out += '>';
      for (const element of elements) out += toStoredXml(element);
      out += '</user>\n';
    }
    await this.write(out);
  }

  /** A host-level element (MUC rooms…), inside `<host>` after its users. */
  async hostElement(element: XmlElement): Promise<void> {
    await this.write(`${toStoredXml(element)}\n`);
  }

  async #flush(): Promise<void> {
    const text = this.#buffer;
    this.#buffer = '';
    if (text) await this.handle.write(text);
  }

  /** Writes what is left and gives the file its name. */
  async commit(): Promise<void> {
    await this.#flush();
    await this.handle.sync();
    await this.#close();
    await rename(`${this.path}.part`, this.path);
  }

  /** Removes the unfinished file. */
  async discard(): Promise<void> {
    await this.#close().catch(() => {});
    await unlink(`${this.path}.part`).catch(() => {});
  }

  async #close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.handle.close();
  }
}
