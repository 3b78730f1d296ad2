/**
 * Caches that can go stale across nodes (verified credentials, OAuth token look-ups, a module's own): when
 * one node drops an entry, every node must. A cache reports what it dropped with `changed` (the server runs
 * the `cache_invalidated` hook, which a cluster module carries to the other nodes); what another node
 * reports is applied with `invalidateLocal`, which runs the caches' drop functions and tells nobody.
 */
export interface CachesApi {
  /**
   * A cache of this node dropped `key` (every entry when undefined): other nodes must drop it too. Resolves
   * once the news is on its way (a cluster module published it), so a command that changed something
   * returns after the other nodes were told; never rejects.
   */
  changed(cache: string, key?: string): Promise<void>;
  /** Another node dropped `key` of `cache` (`*`: every cache): drop it here, without telling anyone. */
  invalidateLocal(cache: string, key?: string): void;
  /** Joins a cache, so that invalidations from other nodes reach it. Returns what leaves it (on a module's stop). */
  register(cache: string, drop: (key?: string) => void): () => void;
}
