//! Cluster administration entries: databases, tables, partitions, offsets.

use jni::objects::{JClass, JIntArray, JObject, JObjectArray, JString};
use jni::sys::{jboolean, jint, jlong, jlongArray, jobject, jobjectArray, jvalue, JNI_FALSE};
use jni::JNIEnv;
use riverlet::blocking;
use riverlet::client::{ConfigChange, OffsetSpec};
use riverlet::metadata::{PartitionSpec, TableDescriptor, TableInfo, TableOptions, TablePath};

use crate::convert::{
    export_schema, import_schema, int_array, new_long_array, new_opt_string_array,
    new_string_array, opt_string, pairs, string, string_array,
};
use crate::handles::{borrow, free};
use crate::jvm::{cache, entry, JniResult};

/// The native side of `io.riverlet.Admin`.
#[derive(Debug)]
pub struct AdminHandle {
    admin: blocking::Admin,
}

impl AdminHandle {
    /// Wraps a blocking admin.
    pub fn new(admin: blocking::Admin) -> Self {
        AdminHandle { admin }
    }
}

fn admin<'a>(h: jlong) -> JniResult<&'a blocking::Admin> {
    Ok(&borrow::<AdminHandle>(h)?.admin)
}

fn path(env: &mut JNIEnv<'_>, name: &JString<'_>) -> JniResult<TablePath> {
    let name = string(env, name, "table name")?;
    Ok(TablePath::parse(&name)?)
}

/// A new `io.riverlet.TableInfo` (without its schema, which is written to `schema_address`):
/// `info`'s, with `schema` (the schema of what a table handle reads) as its columns.
pub fn table_info_object<'l>(
    env: &mut JNIEnv<'l>,
    info: &TableInfo,
    schema: &riverlet::metadata::Schema,
    schema_address: jlong,
) -> JniResult<JObject<'l>> {
    export_schema(&schema.to_arrow_described(), schema_address)?;
    let c = cache()?;
    let d = &info.descriptor;
    let database = env.new_string(&info.table_path.database)?;
    let table = env.new_string(&info.table_path.table)?;
    let pk = match &d.schema.primary_key {
        Some(pk) => JObject::from(new_string_array(env, pk)?),
        None => JObject::null(),
    };
    let partition_keys = new_string_array(env, &d.partition_keys)?;
    let bucket_keys = new_string_array(env, &d.effective_bucket_keys())?;
    let flat = |m: &std::collections::BTreeMap<String, String>| -> Vec<String> {
        m.iter().flat_map(|(k, v)| [k.clone(), v.clone()]).collect()
    };
    let props = new_string_array(env, &flat(&d.properties))?;
    let custom = new_string_array(env, &flat(&d.custom_properties))?;
    let comment = match &d.comment {
        Some(c) => JObject::from(env.new_string(c)?),
        None => JObject::null(),
    };
    let class = <&JClass>::from(c.table_info_class.as_obj());
    let ctor = env.get_method_id(
        class,
        "<init>",
        "(Ljava/lang/String;Ljava/lang/String;JI[Ljava/lang/String;[Ljava/lang/String;\
         [Ljava/lang/String;I[Ljava/lang/String;[Ljava/lang/String;Ljava/lang/String;)V",
    )?;
    let args = [
        jvalue {
            l: database.as_raw(),
        },
        jvalue { l: table.as_raw() },
        jvalue { j: info.table_id },
        jvalue { i: info.schema_id },
        jvalue { l: pk.as_raw() },
        jvalue {
            l: partition_keys.as_raw(),
        },
        jvalue {
            l: bucket_keys.as_raw(),
        },
        jvalue {
            i: info.num_buckets(),
        },
        jvalue { l: props.as_raw() },
        jvalue { l: custom.as_raw() },
        jvalue {
            l: comment.as_raw(),
        },
    ];
    // SAFETY: the constructor id belongs to this class and the arguments match its signature.
    Ok(unsafe { env.new_object_unchecked(class, ctor, &args) }?)
}

/// Frees an admin handle.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_adminFree<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
) {
    entry(&mut env, (), |_| {
        free::<AdminHandle>(h);
        Ok(())
    })
}

/// Creates a database.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_createDatabase<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    name: JString<'l>,
    ignore_if_exists: jboolean,
) {
    entry(&mut env, (), |env| {
        let name = string(env, &name, "database name")?;
        Ok(admin(h)?.create_database(&name, ignore_if_exists != JNI_FALSE)?)
    })
}

/// Drops a database.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_dropDatabase<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    name: JString<'l>,
    ignore_if_not_exists: jboolean,
    cascade: jboolean,
) {
    entry(&mut env, (), |env| {
        let name = string(env, &name, "database name")?;
        Ok(admin(h)?.drop_database(
            &name,
            ignore_if_not_exists != JNI_FALSE,
            cascade != JNI_FALSE,
        )?)
    })
}

/// Lists databases.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_listDatabases<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let names = admin(h)?.list_databases()?;
        Ok(new_string_array(env, &names)?.into_raw())
    })
}

/// Whether a database exists.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_databaseExists<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    name: JString<'l>,
) -> jboolean {
    entry(&mut env, JNI_FALSE, |env| {
        let name = string(env, &name, "database name")?;
        Ok(admin(h)?.database_exists(&name)? as jboolean)
    })
}

/// Creates a table from an exported Arrow schema and the descriptor's parts.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_io_riverlet_NativeMethods_createTable<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    name: JString<'l>,
    schema_address: jlong,
    primary_key: JObjectArray<'l>,
    partition_keys: JObjectArray<'l>,
    bucket_keys: JObjectArray<'l>,
    bucket_count: jint,
    properties: JObjectArray<'l>,
    custom_properties: JObjectArray<'l>,
    comment: JString<'l>,
    ignore_if_exists: jboolean,
) {
    entry(&mut env, (), |env| {
        let path = path(env, &name)?;
        let arrow = import_schema(schema_address)?;
        let pk = string_array(env, &primary_key, "primary key")?;
        let partition_keys = string_array(env, &partition_keys, "partition keys")?;
        let bucket_keys = string_array(env, &bucket_keys, "bucket keys")?;
        let properties = pairs(env, &properties, "properties")?;
        let custom = pairs(env, &custom_properties, "custom properties")?;
        let comment = opt_string(env, &comment)?;
        let options = TableOptions {
            primary_key: pk,
            auto_increment: None,
            partition_keys: partition_keys.unwrap_or_default(),
            bucket_count: (bucket_count >= 0).then_some(bucket_count),
            bucket_keys: bucket_keys.unwrap_or_default(),
            properties,
            custom_properties: custom,
            comment,
        };
        let descriptor = TableDescriptor::from_arrow(&arrow, options)?;
        Ok(admin(h)?.create_table(&path, &descriptor, ignore_if_exists != JNI_FALSE)?)
    })
}

/// Drops a table.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_dropTable<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    name: JString<'l>,
    ignore_if_not_exists: jboolean,
) {
    entry(&mut env, (), |env| {
        let path = path(env, &name)?;
        Ok(admin(h)?.drop_table(&path, ignore_if_not_exists != JNI_FALSE)?)
    })
}

/// `ALTER TABLE ... ADD COLUMN`: the fields of the exported Arrow schema at `columns_address`.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_addColumns<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    name: JString<'l>,
    columns_address: jlong,
) {
    entry(&mut env, (), |env| {
        let path = path(env, &name)?;
        let arrow = import_schema(columns_address)?;
        let columns = riverlet::metadata::AddColumn::from_arrow(&arrow)?;
        Ok(admin(h)?.add_columns(&path, &columns)?)
    })
}

/// Lists the tables of a database.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_listTables<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    database: JString<'l>,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let db = string(env, &database, "database name")?;
        let names = admin(h)?.list_tables(&db)?;
        Ok(new_string_array(env, &names)?.into_raw())
    })
}

/// Adds ACLs given as groups of (resource, principal, operation, host; "" = every host).
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_createAcls<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    flat: JObjectArray<'l>,
) {
    entry(&mut env, (), |env| {
        let flat = string_array(env, &flat, "acls")?.unwrap_or_default();
        let bindings = flat
            .chunks(4)
            .map(|c| match c {
                [r, p, o, host] => riverlet::acl::AclBinding::parse(r, p, o, Some(host)),
                _ => Err(riverlet::Error::invalid("acls: groups of 4 texts expected")),
            })
            .collect::<riverlet::Result<Vec<_>>>()?;
        Ok(admin(h)?.create_acls(&bindings)?)
    })
}

/// The ACL filter of (resource, principal, operation, host, permission); "" matches all.
fn acl_filter(env: &mut JNIEnv<'_>, f: &JObjectArray<'_>) -> JniResult<riverlet::acl::AclFilter> {
    let f = string_array(env, f, "filter")?.unwrap_or_default();
    let part = |i: usize| f.get(i).map(String::as_str);
    Ok(riverlet::acl::AclFilter::parse(
        part(0),
        part(1),
        part(2),
        part(3),
        part(4),
    )?)
}

/// ACL bindings as groups of (resource, principal, operation, host, permission).
fn acl_texts(bindings: &[riverlet::acl::AclBinding]) -> Vec<String> {
    bindings
        .iter()
        .flat_map(|b| {
            [
                b.resource.text(),
                b.principal.to_string(),
                b.operation.to_string(),
                b.host.clone(),
                b.permission.to_string(),
            ]
        })
        .collect()
}

/// The ACLs matching a filter.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_listAcls<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    filter: JObjectArray<'l>,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let f = acl_filter(env, &filter)?;
        let found = admin(h)?.list_acls(&f)?;
        Ok(new_string_array(env, &acl_texts(&found))?.into_raw())
    })
}

/// Removes the ACLs matching a filter and returns them.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_dropAcls<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    filter: JObjectArray<'l>,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let f = acl_filter(env, &filter)?;
        let gone = admin(h)?.drop_acls(&[f])?;
        Ok(new_string_array(env, &acl_texts(&gone))?.into_raw())
    })
}

/// Whether a table exists.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_tableExists<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    name: JString<'l>,
) -> jboolean {
    entry(&mut env, JNI_FALSE, |env| {
        let path = path(env, &name)?;
        Ok(admin(h)?.table_exists(&path)? as jboolean)
    })
}

/// A table's info; its Arrow schema goes to `schema_address`.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_tableInfo<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    name: JString<'l>,
    schema_address: jlong,
) -> jobject {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let path = path(env, &name)?;
        let info = admin(h)?.table_info(&path)?;
        Ok(table_info_object(env, &info, info.schema(), schema_address)?.into_raw())
    })
}

/// The partitions of a table as `io.riverlet.PartitionInfo[]`.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_listPartitions<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    name: JString<'l>,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let path = path(env, &name)?;
        let parts = admin(h)?.list_partitions(&path)?;
        let c = cache()?;
        let class = <&JClass>::from(c.partition_info_class.as_obj());
        let ctor =
            env.get_method_id(class, "<init>", "(JLjava/lang/String;[Ljava/lang/String;)V")?;
        let arr = env.new_object_array(parts.len() as i32, class, JObject::null())?;
        for (i, p) in parts.iter().enumerate() {
            let pname = env.new_string(&p.name)?;
            let flat: Vec<String> = p
                .spec
                .entries
                .iter()
                .flat_map(|(k, v)| [k.clone(), v.clone()])
                .collect();
            let spec = new_string_array(env, &flat)?;
            let args = [
                jvalue { j: p.partition_id },
                jvalue { l: pname.as_raw() },
                jvalue { l: spec.as_raw() },
            ];
            // SAFETY: the constructor id belongs to this class; arguments match its signature.
            let o = unsafe { env.new_object_unchecked(class, ctor, &args) }?;
            env.set_object_array_element(&arr, i as i32, &o)?;
            env.delete_local_ref(o)?;
            env.delete_local_ref(pname)?;
            env.delete_local_ref(spec)?;
        }
        Ok(arr.into_raw())
    })
}

fn spec(env: &mut JNIEnv<'_>, flat: &JObjectArray<'_>) -> JniResult<PartitionSpec> {
    Ok(PartitionSpec::new(pairs(env, flat, "partition spec")?))
}

/// Creates a partition.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_createPartition<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    name: JString<'l>,
    flat_spec: JObjectArray<'l>,
    ignore_if_exists: jboolean,
) {
    entry(&mut env, (), |env| {
        let path = path(env, &name)?;
        let spec = spec(env, &flat_spec)?;
        Ok(admin(h)?.create_partition(&path, &spec, ignore_if_exists != JNI_FALSE)?)
    })
}

/// Drops a partition.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_dropPartition<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    name: JString<'l>,
    flat_spec: JObjectArray<'l>,
    ignore_if_not_exists: jboolean,
) {
    entry(&mut env, (), |env| {
        let path = path(env, &name)?;
        let spec = spec(env, &flat_spec)?;
        Ok(admin(h)?.drop_partition(&path, &spec, ignore_if_not_exists != JNI_FALSE)?)
    })
}

/// Offsets per bucket, flattened as `bucket, offset, bucket, offset...`.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_listOffsets<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    name: JString<'l>,
    partition: JString<'l>,
    buckets: JIntArray<'l>,
    spec_kind: jint,
    timestamp: jlong,
) -> jlongArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let path = path(env, &name)?;
        let partition = opt_string(env, &partition)?;
        let buckets = int_array(env, &buckets)?.unwrap_or_default();
        let spec = match spec_kind {
            0 => OffsetSpec::Earliest,
            1 => OffsetSpec::Latest,
            _ => OffsetSpec::Timestamp(timestamp),
        };
        let offsets = admin(h)?.list_offsets(&path, partition.as_deref(), &buckets, spec)?;
        let flat: Vec<i64> = offsets
            .iter()
            .flat_map(|(b, o)| [i64::from(*b), *o])
            .collect();
        Ok(new_long_array(env, &flat)?.into_raw())
    })
}

/// Producer offsets from the JVM's flat groups of (table id, has partition 0/1, partition id,
/// bucket, offset).
fn producer_offsets(
    flat: &[i64],
) -> JniResult<std::collections::BTreeMap<riverlet::client::ProducerBucket, i64>> {
    if !flat.len().is_multiple_of(5) {
        return Err(riverlet::Error::invalid("offsets: groups of 5 longs expected").into());
    }
    flat.chunks(5)
        .map(|c| {
            let bucket = i32::try_from(c[3]).map_err(|_| {
                riverlet::Error::invalid(format!("bucket {} is out of the int range", c[3]))
            })?;
            let bucket = riverlet::client::ProducerBucket {
                table_id: c[0],
                partition_id: (c[1] != 0).then_some(c[2]),
                bucket,
            };
            Ok((bucket, c[4]))
        })
        .collect()
}

/// Registers a producer's offsets; true when registered, false when a live registration was
/// kept. `ttl_ms` applies when `has_ttl` (otherwise the server's default).
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_registerProducerOffsets<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    producer_id: JString<'l>,
    offsets: jni::objects::JLongArray<'l>,
    has_ttl: jboolean,
    ttl_ms: jlong,
) -> jboolean {
    entry(&mut env, JNI_FALSE, |env| {
        let id = string(env, &producer_id, "producer id")?;
        let flat = crate::convert::long_array_values(env, &offsets)?.unwrap_or_default();
        let offsets = producer_offsets(&flat)?;
        let ttl = if has_ttl != JNI_FALSE {
            let ms = u64::try_from(ttl_ms).map_err(|_| {
                riverlet::Error::invalid(format!("ttl must not be negative, got {ttl_ms} ms"))
            })?;
            Some(std::time::Duration::from_millis(ms))
        } else {
            None
        };
        let r = admin(h)?.register_producer_offsets(&id, &offsets, ttl)?;
        Ok(jboolean::from(
            r == riverlet::client::RegisterResult::Created,
        ))
    })
}

/// A producer's registration as (expiration time ms, then groups of table id, has partition,
/// partition id, bucket, offset), or null when there is none.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_getProducerOffsets<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    producer_id: JString<'l>,
) -> jlongArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let id = string(env, &producer_id, "producer id")?;
        let Some(p) = admin(h)?.get_producer_offsets(&id)? else {
            return Ok(std::ptr::null_mut());
        };
        let mut flat = vec![p.expiration_time_ms];
        for (b, o) in &p.offsets {
            flat.extend([
                b.table_id,
                i64::from(b.partition_id.is_some()),
                b.partition_id.unwrap_or(0),
                i64::from(b.bucket),
                *o,
            ]);
        }
        Ok(new_long_array(env, &flat)?.into_raw())
    })
}

/// A lake snapshot of a table (the latest, `snapshot_id`'s when `by_id`, or the readable one),
/// flat: `[table id, snapshot id, then per bucket with an offset: has partition, partition
/// id, bucket, log offset]`; null when the table has none.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_lakeSnapshot<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    name: JString<'l>,
    by_id: jboolean,
    snapshot_id: jlong,
    readable: jboolean,
) -> jlongArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let path = path(env, &name)?;
        let id = (by_id != 0).then_some(snapshot_id);
        let Some(s) = admin(h)?.lake_snapshot(&path, id, readable != 0)? else {
            return Ok(std::ptr::null_mut());
        };
        let mut flat = vec![s.table_id, s.snapshot_id];
        for b in &s.buckets {
            // a bucket nothing was tiered from yet has no offset: left out, as Fluss's
            // LakeSnapshot leaves it out of its bucket offsets
            if let Some(offset) = b.log_offset {
                flat.extend([
                    i64::from(b.partition_id.is_some()),
                    b.partition_id.unwrap_or(0),
                    i64::from(b.bucket),
                    offset,
                ]);
            }
        }
        Ok(new_long_array(env, &flat)?.into_raw())
    })
}

/// Deletes a producer's registration.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_deleteProducerOffsets<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    producer_id: JString<'l>,
) {
    entry(&mut env, (), |env| {
        let id = string(env, &producer_id, "producer id")?;
        Ok(admin(h)?.delete_producer_offsets(&id)?)
    })
}

/// The changes of a `set` (flat key, value pairs) and a `delete`/`reset` key list.
fn config_changes(
    env: &mut JNIEnv<'_>,
    set: &JObjectArray<'_>,
    delete: &JObjectArray<'_>,
) -> JniResult<Vec<ConfigChange>> {
    let mut changes: Vec<ConfigChange> = pairs(env, set, "options to set")?
        .into_iter()
        .map(|(k, v)| ConfigChange::Set(k, v))
        .collect();
    let deleted = string_array(env, delete, "options to delete")?.unwrap_or_default();
    changes.extend(deleted.into_iter().map(ConfigChange::Delete));
    Ok(changes)
}

/// Every server option as (key, value or null, source) triples.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_describeClusterConfigs<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let flat: Vec<Option<String>> = admin(h)?
            .describe_cluster_configs()?
            .into_iter()
            .flat_map(|c| [Some(c.key), c.value, Some(c.source)])
            .collect();
        Ok(new_opt_string_array(env, &flat)?.into_raw())
    })
}

/// Sets and deletes dynamic server options.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_alterClusterConfigs<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    set: JObjectArray<'l>,
    delete: JObjectArray<'l>,
) {
    entry(&mut env, (), |env| {
        let changes = config_changes(env, &set, &delete)?;
        Ok(admin(h)?.alter_cluster_configs(&changes)?)
    })
}

/// Changes a database's properties and comment (a null comment keeps it).
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_alterDatabase<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    name: JString<'l>,
    set: JObjectArray<'l>,
    reset: JObjectArray<'l>,
    comment: JString<'l>,
    ignore_if_not_exists: jboolean,
) {
    entry(&mut env, (), |env| {
        let name = string(env, &name, "database name")?;
        let changes = config_changes(env, &set, &reset)?;
        let comment = opt_string(env, &comment)?;
        Ok(admin(h)?.alter_database(
            &name,
            &changes,
            comment.as_deref(),
            ignore_if_not_exists != JNI_FALSE,
        )?)
    })
}

/// A database as (comment or null, created ms, modified ms, then key, value pairs).
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_databaseInfo<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    name: JString<'l>,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let name = string(env, &name, "database name")?;
        let info = admin(h)?.database_info(&name)?;
        let mut flat = vec![
            info.comment,
            Some(info.created_time.to_string()),
            Some(info.modified_time.to_string()),
        ];
        for (k, v) in info.custom_properties {
            flat.extend([Some(k), Some(v)]);
        }
        Ok(new_opt_string_array(env, &flat)?.into_raw())
    })
}
