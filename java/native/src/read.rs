//! Read entries: scan (an Arrow C stream into the JVM's struct), count, and subscriptions
//! (poll exports the change batches as one C stream plus their buckets).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use arrow_schema::{Schema, SchemaRef};
use jni::objects::{JClass, JObject};
use jni::sys::{jlong, jlongArray, jobjectArray};
use jni::JNIEnv;
use riverlet::blocking::scan::Subscription;
use riverlet::metadata::PartitionSpec;
use riverlet::scan::time::TimeZoneSpec;
use riverlet::scan::{
    changelog_meta_fields, BucketOffset, Filter, PartitionSelector, ReadRequest, StartupMode,
    SubscribeRequest,
};
use riverlet::Error;

use crate::convert::{
    batches_reader, export_schema, export_stream, int_array_field, long_array_field,
    new_long_array, new_string_array, opt_string, pairs_array_field, string_array_field,
    string_field, time_bound,
};
use crate::handles::{borrow, free, into_handle};
use crate::jvm::{cache, entry, JniResult};
use crate::table::table_handle;

fn partitions(
    env: &mut JNIEnv<'_>,
    options: &JObject<'_>,
) -> JniResult<Option<Vec<PartitionSelector>>> {
    let names = string_array_field(env, options, "partitionNames")?;
    let specs = pairs_array_field(env, options, "partitionSpecs")?;
    if names.is_none() && specs.is_none() {
        return Ok(None);
    }
    let mut out: Vec<PartitionSelector> = names
        .unwrap_or_default()
        .into_iter()
        .map(PartitionSelector::Name)
        .collect();
    out.extend(
        specs
            .unwrap_or_default()
            .into_iter()
            .map(|s| PartitionSelector::Spec(PartitionSpec::new(s))),
    );
    Ok(Some(out))
}

fn usize_field(
    env: &mut JNIEnv<'_>,
    options: &JObject<'_>,
    field: &str,
) -> JniResult<Option<usize>> {
    let v = env.get_field(options, field, "J")?.j()?;
    if v < 0 {
        return Ok(None);
    }
    Ok(Some(usize::try_from(v).map_err(|_| {
        Error::invalid(format!("{field} {v} is too large"))
    })?))
}

/// The core's [`ReadRequest`], filled from an `io.riverlet.ReadOptions` (values only: the core
/// interprets and validates every option).
fn read_request(env: &mut JNIEnv<'_>, options: &JObject<'_>) -> JniResult<ReadRequest> {
    if options.is_null() {
        return Err(Error::invalid("read options must not be null").into());
    }
    let start = env
        .get_field(options, "start", "Lio/riverlet/TimeBound;")?
        .l()?;
    let end = env
        .get_field(options, "end", "Lio/riverlet/TimeBound;")?
        .l()?;
    let batch_size = env.get_field(options, "batchSize", "I")?.i()?;
    Ok(ReadRequest {
        columns: string_array_field(env, options, "columns")?,
        filter: string_field(env, options, "filter")?.map(Filter::Text),
        partitions: partitions(env, options)?,
        buckets: int_array_field(env, options, "buckets")?,
        limit: usize_field(env, options, "limit")?,
        start: time_bound(env, &start)?,
        end: time_bound(env, &end)?,
        time_zone: string_field(env, options, "zone")?,
        read_optimized: env.get_field(options, "readOptimized", "Z")?.z()?,
        changelog: env.get_field(options, "changelog", "Z")?.z()?,
        batch_size: usize::try_from(batch_size).ok().filter(|n| *n > 0),
        // Spark and Flink consume a read batch by batch through the C stream.
        keep_batches: false,
    })
}

/// Plans and starts a read; writes its C stream to `stream_address` and returns the read's
/// warnings as `[kind name, message, ...]` (the Java side turns them into `io.riverlet.Warning`s).
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_scan<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    options: JObject<'l>,
    stream_address: jlong,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let request = read_request(env, &options)?;
        let reader = table_handle(h)?.table.read(&request)?;
        let warnings: Vec<String> = reader
            .warnings()
            .iter()
            .flat_map(|w| [w.kind.name().to_string(), w.message.clone()])
            .collect();
        // The array first: if it cannot be made, no stream has been handed to the JVM yet.
        let out = new_string_array(env, &warnings)?;
        export_stream(Box::new(reader), stream_address)?;
        Ok(out.into_raw())
    })
}

/// Epoch milliseconds of a `TimeBound` read in `zone` (None: the core's default zone), as a
/// read's window would resolve it; a bad bound or zone is the core's invalid-argument error.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_resolveTimeBound<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    bound: JObject<'l>,
    zone: JObject<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        let point = time_bound(env, &bound)?
            .ok_or_else(|| Error::invalid("time bound must not be null"))?;
        let tz = match opt_string(env, &zone)? {
            Some(z) => TimeZoneSpec::parse(&z)?,
            None => TimeZoneSpec::default(),
        };
        Ok(point.resolve(&tz, "timestamp")?)
    })
}

/// Counts the rows a read would return.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_count<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    options: JObject<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        let request = read_request(env, &options)?;
        let n = table_handle(h)?.table.count(&request)?;
        Ok(i64::try_from(n).unwrap_or(i64::MAX))
    })
}

/// The native side of `io.riverlet.Subscription`.
#[derive(Debug)]
pub struct SubscriptionHandle {
    sub: Mutex<Subscription>,
    /// The schema of polled batches: change columns, then the subscribed columns.
    changelog_schema: SchemaRef,
}

fn lock_sub(s: &SubscriptionHandle) -> std::sync::MutexGuard<'_, Subscription> {
    s.sub.lock().unwrap_or_else(|p| p.into_inner())
}

/// Starts a subscription from an `io.riverlet.SubscribeOptions`.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_subscribe<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    options: JObject<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        if options.is_null() {
            return Err(Error::invalid("subscribe options must not be null").into());
        }
        let t = table_handle(h)?;
        let kind = env.get_field(&options, "startupMode", "I")?.i()?;
        let mut start_offsets = Vec::new();
        let mode = match kind {
            0 => StartupMode::Full,
            1 => StartupMode::Earliest,
            2 => StartupMode::Latest,
            3 => StartupMode::Timestamp(env.get_field(&options, "startupTimestamp", "J")?.j()?),
            _ => {
                // Resuming: the buckets of the position continue from their offsets, others
                // (a partition created since) from the earliest offset.
                let flat = long_array_field(env, &options, "position")?.unwrap_or_default();
                for t in flat.chunks_exact(3) {
                    start_offsets.push(BucketOffset {
                        partition_id: (t[0] >= 0).then_some(t[0]),
                        partition_name: None,
                        bucket: i32::try_from(t[1]).map_err(|_| {
                            Error::invalid(format!("bucket {} is out of range", t[1]))
                        })?,
                        offset: t[2],
                    });
                }
                StartupMode::Earliest
            }
        };
        let request = SubscribeRequest {
            columns: string_array_field(env, &options, "columns")?,
            partitions: partitions(env, &options)?,
            buckets: int_array_field(env, &options, "buckets")?,
            startup_mode: mode,
            start_offsets,
        };
        let sub = t.table.subscribe(&request)?;
        let mut fields = changelog_meta_fields();
        fields.extend(sub.schema().fields().iter().map(|f| f.as_ref().clone()));
        let changelog_schema = Arc::new(Schema::new(fields));
        Ok(into_handle(SubscriptionHandle {
            sub: Mutex::new(sub),
            changelog_schema,
        }))
    })
}

/// Frees a subscription.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_subscriptionFree<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
) {
    entry(&mut env, (), |_| {
        free::<SubscriptionHandle>(h);
        Ok(())
    })
}

/// The subscribed columns' schema.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_subscriptionSchema<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    schema_address: jlong,
) {
    entry(&mut env, (), |_| {
        let s = borrow::<SubscriptionHandle>(h)?;
        let schema = lock_sub(s).schema();
        export_schema(&schema, schema_address)
    })
}

/// Polls: the change batches go to `stream_address` as one C stream; returns `Object[]{long[]
/// (partition id or -1, bucket) per batch, String[] partition names}`.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_poll<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    timeout_millis: jlong,
    stream_address: jlong,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let s = borrow::<SubscriptionHandle>(h)?;
        let timeout = Duration::from_millis(u64::try_from(timeout_millis).unwrap_or(0));
        let changes = lock_sub(s).poll(timeout)?;
        let mut ids = Vec::with_capacity(changes.len() * 2);
        let mut names = Vec::with_capacity(changes.len());
        let mut batches = Vec::with_capacity(changes.len());
        for c in &changes {
            ids.push(c.partition_id.unwrap_or(-1));
            ids.push(i64::from(c.bucket));
            names.push(c.partition_name.clone());
            batches.push(c.to_changelog_batch()?);
        }
        export_stream(
            batches_reader(s.changelog_schema.clone(), batches),
            stream_address,
        )?;
        let c = cache()?;
        let ids = new_long_array(env, &ids)?;
        let names_arr = env.new_object_array(
            names.len() as i32,
            <&JClass>::from(c.string_class.as_obj()),
            JObject::null(),
        )?;
        for (i, n) in names.iter().enumerate() {
            if let Some(n) = n {
                let js = env.new_string(n)?;
                env.set_object_array_element(&names_arr, i as i32, &js)?;
                env.delete_local_ref(js)?;
            }
        }
        let out =
            env.new_object_array(2, <&JClass>::from(c.object_class.as_obj()), JObject::null())?;
        env.set_object_array_element(&out, 0, &ids)?;
        env.set_object_array_element(&out, 1, &names_arr)?;
        Ok(out.into_raw())
    })
}

/// The next offset of every bucket: `partition id or -1, bucket, offset` triples.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_positions<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
) -> jlongArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let s = borrow::<SubscriptionHandle>(h)?;
        let flat: Vec<i64> = lock_sub(s)
            .position()
            .into_iter()
            .flat_map(|p| [p.partition_id.unwrap_or(-1), i64::from(p.bucket), p.offset])
            .collect();
        Ok(new_long_array(env, &flat)?.into_raw())
    })
}
