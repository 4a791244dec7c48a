/** The part of postject's API the single-executable build uses (postject ships no types). */
declare module "postject" {
  /** Injects `data` as resource `resource` into the executable `file`, in place. */
  export function inject(
    file: string,
    resource: string,
    data: Buffer,
    options: { sentinelFuse: string; machoSegmentName?: string; overwrite?: boolean },
  ): Promise<void>;
}
