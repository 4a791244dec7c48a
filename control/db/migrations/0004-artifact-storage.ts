/**
 * Artifact files stored uncompressed out of line (`storage external`), so a download reads
 * its chunks with `substring(content from … for …)` and PostgreSQL fetches only the TOAST
 * pieces each chunk covers. With the default (compressed) storage every chunk would
 * decompress the file up to that chunk: quadratic work for one download. Agent artifacts
 * are compressed archives already, so little space is lost. Rows stored before are
 * rewritten once under the new storage.
 */
import { Migration } from "@mikro-orm/migrations";

export class Migration0004ArtifactStorage extends Migration {
  override async up(): Promise<void> {
    this.addSql("alter table artifact_files alter column content set storage external");
    // `|| ''` makes a new value, which is stored under the column's new strategy.
    this.addSql("update artifact_files set content = content || ''::bytea");
  }
}
