-- Canonical view: device (one row per Device: equipment and implants the patient has, e.g. a wheelchair, a home CPAP
-- unit, a blood glucose meter, a pacemaker).
-- Source table: map_device (mappings/Device.json).
-- No time of use: an R4 Device records no period of use (that would be a DeviceUseStatement), so a device is listed
-- without a date. manufacture_date and expiration_date are the device's own dates, not when the patient used it, and
-- are no time field: the record as of a past instant still shows a device made later.
-- <time>_offset: minutes east of UTC of the offset <time> was written with (-300 for -05:00, 0 for Z; NULL for a
-- date or a time written without one). <time> itself is the UTC instant.
SELECT
    d.patient_id,
    d.ref,
    coalesce(d.type_text, d.type_display, d.device_name, d.code) AS name,
    coalesce(d.snomed_code, d.code) AS code,
    CASE WHEN d.snomed_code IS NOT NULL THEN 'http://snomed.info/sct' ELSE d.code_system END AS code_system,
    d.device_name,
    d.status,
    d.udi_device_identifier,
    d.udi_carrier_hrf,
    d.distinct_identifier,
    d.manufacturer,
    d.model_number,
    d.lot_number,
    d.serial_number,
    TRY_CAST(d.manufacture_date AS TIMESTAMPTZ) AS manufacture_date,
    utc_offset_minutes(d.manufacture_date) AS manufacture_date_offset,
    TRY_CAST(d.expiration_date AS TIMESTAMPTZ) AS expiration_date,
    utc_offset_minutes(d.expiration_date) AS expiration_date_offset,
    d.location
FROM map_device AS d
