/**
 * The plugin API's NodesApi: this node alone, or the cluster a cluster module's NodeTransport spans. Alone,
 * this node owns every key and a call to it runs the channel in place (ProcessesApi.call on this process);
 * with a transport, ownership and membership are the cluster's, and calls to other nodes travel through
 * it. The transport is tagged by the module that gave it and goes when that module stops.
 */
import { ChannelError, type ChannelValue, type NodeTransport, type NodesApi, type ProcessesApi } from '@service/plugin-api';

export class ServerNodes implements NodesApi {
  #transport?: { readonly transport: NodeTransport; readonly owner: string };

  constructor(
    private readonly name: () => string,
    private readonly processes: ProcessesApi,
  ) {}

  get self(): string {
    return this.name();
  }

  attach(transport: NodeTransport, owner: string): void {
    if (this.#transport) throw new Error(`the cluster's node transport is already given by ${this.#transport.owner}`);
    this.#transport = { transport, owner };
  }

  removeOwner(owner: string): void {
    if (this.#transport?.owner === owner) this.#transport = undefined;
  }

  /** The transport while this node is a cluster member. */
  #cluster(): NodeTransport | undefined {
    const transport = this.#transport?.transport;
    return transport?.member() ? transport : undefined;
  }

  clustered(): boolean {
    return this.#cluster() !== undefined;
  }

  live(): readonly string[] {
    return this.#cluster()?.live() ?? [this.self];
  }

  async master(): Promise<string> {
    return (await this.#cluster()?.master()) ?? this.self;
  }

  owner(key: string): Promise<string> {
    return this.#cluster()?.owner(key) ?? Promise.resolve(this.self);
  }

  release(key: string): Promise<void> {
    return this.#cluster()?.release(key) ?? Promise.resolve();
  }

  call(node: string, name: string, payload: ChannelValue, order?: string): Promise<ChannelValue> {
    if (node === this.self) return this.processes.call(this.processes.self, name, payload);
    const cluster = this.#cluster();
    if (!cluster) return Promise.reject(new ChannelError(`there is no node ${node}: ${this.self} is not in a cluster`, 'unreachable'));
    return cluster.call(node, name, payload, order);
  }
}
