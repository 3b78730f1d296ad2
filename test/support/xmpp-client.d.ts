// Minimal types for @xmpp/client (it ships none), as far as the tests use it.
declare module '@xmpp/client' {
  export interface Element {
    name: string;
    attrs: Record<string, string>;
    children: Array<Element | string>;
    is(name: string, xmlns?: string): boolean;
    getChild(name: string, xmlns?: string): Element | undefined;
    getChildren(name: string, xmlns?: string): Element[];
    getChildText(name: string, xmlns?: string): string | null;
    getChildElements(): Element[];
    text(): string;
    toString(): string;
  }
  export interface Client {
    jid?: { toString(): string; local: string; resource: string };
    start(): Promise<unknown>;
    stop(): Promise<unknown>;
    send(...elements: Element[]): Promise<void>;
    sendMany(elements: Element[]): Promise<void>;
    write(text: string): Promise<void>;
    on(event: string, listener: (...args: any[]) => void): void;
    off(event: string, listener: (...args: any[]) => void): void;
    iqCaller: { request(element: Element, timeout?: number): Promise<Element> };
    [key: string]: any;
  }
  export function client(options: Record<string, unknown>): Client;
  export function xml(name: string, attrs?: Record<string, string | undefined> | null, ...children: Array<Element | string | undefined>): Element;
  export function jid(text: string): { toString(): string };
}
