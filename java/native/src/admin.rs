//! Cluster administration entries: databases, tables, partitions, offsets.

use jni::objects::{JClass, JIntArray, JObject, JObjectArray, JString};
use jni::sys::{jboolean, jint, jlong, jlongArray, jobject, jobjectArray, jvalue, JNI_FALSE};
use jni::JNIEnv;
use riverlet::blocking;
use riverlet::client::OffsetSpec;
use riverlet::metadata::{PartitionSpec, TableDescriptor, TableInfo, TableOptions, TablePath};

use crate::convert::{
    export_schema, import_schema, int_array, new_long_array, new_string_array, opt_string, pairs,
    string, string_array,
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
