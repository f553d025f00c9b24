#ifndef COEXIST_CNATS_SHIM_H
#define COEXIST_CNATS_SHIM_H

#include <nats/nats.h>
#include <string.h>

/// Creates the stream `name` holding `subject` (file storage, limits retention, `replicas`, duplicate
/// window `duplicates` nanoseconds), or checks the one that exists: `*mismatch` is set when it does not
/// hold `subject` (another stream's subjects), and nothing is changed then.
static inline natsStatus coexist_js_ensure_stream(jsCtx *js, const char *name, const char *subject,
                                                  int64_t replicas, int64_t duplicates, int32_t maxMsgSize,
                                                  jsErrCode *errCode, bool *mismatch, bool *created) {
    jsStreamInfo *info = NULL;
    *mismatch = false;
    *created = false;
    natsStatus status = js_GetStreamInfo(&info, js, name, NULL, errCode);
    if (status == NATS_OK) {
        bool found = false;
        for (int index = 0; info->Config != NULL && index < info->Config->SubjectsLen; index++) {
            if (strcmp(info->Config->Subjects[index], subject) == 0) found = true;
        }
        *mismatch = !found;
        jsStreamInfo_Destroy(info);
        return NATS_OK;
    }
    if (status != NATS_NOT_FOUND && *errCode != JSStreamNotFoundErr) return status;
    jsStreamConfig config;
    jsStreamConfig_Init(&config);
    const char *subjects[1] = {subject};
    config.Name = name;
    config.Subjects = subjects;
    config.SubjectsLen = 1;
    config.Storage = js_FileStorage;
    config.Replicas = replicas;
    config.Duplicates = duplicates;
    if (maxMsgSize > 0) config.MaxMsgSize = maxMsgSize;
    *errCode = 0;
    status = js_AddStream(&info, js, &config, NULL, errCode);
    if (status == NATS_OK) {
        *created = true;
        jsStreamInfo_Destroy(info);
    }
    return status;
}

/// The stream's message count, first and last sequence, and the largest message it takes (its MaxMsgSize:
/// -1 or 0 when it sets none).
static inline natsStatus coexist_js_stream_state(jsCtx *js, const char *name, uint64_t *messages,
                                                 uint64_t *firstSequence, uint64_t *lastSequence,
                                                 int32_t *maxMsgSize, jsErrCode *errCode) {
    jsStreamInfo *info = NULL;
    natsStatus status = js_GetStreamInfo(&info, js, name, NULL, errCode);
    if (status != NATS_OK) return status;
    *messages = info->State.Msgs;
    *firstSequence = info->State.FirstSeq;
    *lastSequence = info->State.LastSeq;
    *maxMsgSize = info->Config != NULL ? info->Config->MaxMsgSize : -1;
    jsStreamInfo_Destroy(info);
    return NATS_OK;
}

/// Publishes `msg` with `msgID` for the server's duplicate window; on success the ack's sequence and
/// whether the server took it as a duplicate.
static inline natsStatus coexist_js_publish(jsCtx *js, natsMsg *msg, const char *msgID, int64_t maxWait,
                                            uint64_t *sequence, bool *duplicate, jsErrCode *errCode) {
    jsPubOptions options;
    jsPubOptions_Init(&options);
    options.MsgId = msgID;
    options.MaxWait = maxWait;
    jsPubAck *ack = NULL;
    natsStatus status = js_PublishMsg(&ack, js, msg, &options, errCode);
    if (status == NATS_OK && ack != NULL) {
        *sequence = ack->Sequence;
        *duplicate = ack->Duplicate;
        jsPubAck_Destroy(ack);
    }
    return status;
}

/// The last message of `stream` on `subject` (wildcards allowed): `*found` false when there is none.
static inline natsStatus coexist_js_last_message(natsMsg **msg, jsCtx *js, const char *stream, const char *subject,
                                                 bool *found, jsErrCode *errCode) {
    *found = false;
    *msg = NULL;
    natsStatus status = js_GetLastMsg(msg, js, stream, subject, NULL, errCode);
    if (status == NATS_OK) {
        *found = true;
        return NATS_OK;
    }
    if (status == NATS_NOT_FOUND || *errCode == JSNoMessageFoundErr) {
        *errCode = 0;
        return NATS_OK;
    }
    return status;
}

/// The JetStream context of `nc`, waiting `wait` milliseconds for API replies.
static inline natsStatus coexist_js_context(jsCtx **js, natsConnection *nc, int64_t wait) {
    jsOptions options;
    jsOptions_Init(&options);
    options.Wait = wait;
    return natsConnection_JetStream(js, nc, &options);
}

/// Adds a consumer on `stream` for `subject`, from the messages stored after it is made, acknowledging
/// nothing (a reader that measures delivery): with `durable` (and no `deliver`), the durable pull consumer
/// of that name; with `deliver`, an ephemeral push consumer delivering there (the server removes it once
/// nobody takes `deliver`).
static inline natsStatus coexist_js_add_consumer(jsCtx *js, const char *stream, const char *subject,
                                                 const char *durable, const char *deliver, jsErrCode *errCode) {
    jsConsumerConfig config;
    jsConsumerConfig_Init(&config);
    config.Durable = durable;
    config.DeliverSubject = deliver;
    config.FilterSubject = subject;
    config.AckPolicy = js_AckNone;
    config.DeliverPolicy = js_DeliverNew;
    jsConsumerInfo *info = NULL;
    natsStatus status = js_AddConsumer(&info, js, stream, &config, NULL, errCode);
    if (info != NULL) jsConsumerInfo_Destroy(info);
    return status;
}

/// The pull requests waiting on the consumer `consumer` of `stream`; NATS_NOT_FOUND when there is no such
/// consumer.
static inline natsStatus coexist_js_consumer_waiting(jsCtx *js, const char *stream, const char *consumer,
                                                     int64_t *waiting, jsErrCode *errCode) {
    jsConsumerInfo *info = NULL;
    natsStatus status = js_GetConsumerInfo(&info, js, stream, consumer, NULL, errCode);
    if (status == NATS_OK && info != NULL) *waiting = info->NumWaiting;
    if (info != NULL) jsConsumerInfo_Destroy(info);
    return status;
}

/// How many times the connection reconnected.
static inline uint64_t coexist_reconnects(natsConnection *nc, natsStatistics *stats) {
    uint64_t reconnects = 0;
    if (natsConnection_GetStats(nc, stats) == NATS_OK)
        natsStatistics_GetCounts(stats, NULL, NULL, NULL, NULL, &reconnects);
    return reconnects;
}

#endif
