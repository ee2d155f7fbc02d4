/** Object storage of runtime spaces (issue 26, behaviour §11; migration 0042). */
export interface StorageTables {
  /** One object of a space's store: its bytes are a blob (content-addressed) in the blob store. */
  storage_objects: {
    /** 128 bits as 32 lowercase hex characters. */
    id: string;
    space_id: string;
    content_type: string;
    size: number;
    sha256: string;
    /** The version whose code uploaded it (null: uploaded otherwise). */
    version_id: string | null;
    created_at: string;
  };
  /** The key a space's object read URLs are signed with; rotating it ends every URL given before. */
  space_storage_keys: {
    space_id: string;
    /** 32 random bytes, hex. */
    read_key: string;
    rotated_at: string;
  };
}
