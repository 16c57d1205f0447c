#!/usr/bin/env python3
"""Writes the fixture's PDF pages (kb/<tenant>/*.pdf) with a small hand-rolled PDF writer.

Each PDF uses the standard Helvetica Type 1 font (no embedding), one content stream per page,
a running header line and a "Page N of M" footer, and an /Info dictionary with /Title. The
page text is ASCII only. Run: python3 eval/ravensworth/make_pdfs.py (the output is committed).
Metadata for the help centre (document_id, tenant, groups, ...) is in <file>.pdf.meta.yaml.
"""

import os
import runpy

HERE = os.path.dirname(os.path.abspath(__file__))


# The writer is eval/fernhill/make_pdfs.py's (one PDF per document, same layout).
_WRITER = runpy.run_path(os.path.join(HERE, "..", "fernhill", "make_pdfs.py"))


DOCS = {}

DOCS["ravensworth/orthodontics-and-implants-fee-guide"] = (
    "Orthodontics and implants fee guide",
    "Ravensworth Dental - Orthodontics and implants fee guide - fees from 1 April 2026",
    """
# Orthodontics and implants fee guide
Ravensworth Dental, all practices. Fees from 1 April 2026.
Fees are per course of treatment unless we say otherwise.

1. ORTHODONTICS (STRAIGHTENING TEETH)
We straighten teeth with clear aligners or fixed braces, for adults and
for children aged 12 and over. Every course starts with an orthodontic
consultation, which includes a 3D scan of your teeth and a simulation
of the result, so you can see what to expect before you decide.

Treatment                                Typical length     Fee
Orthodontic consultation and 3D scan     45 minutes         GBP 95*
Clear aligners Lite (mild crowding)      up to 7 months     GBP 2,450
Clear aligners Comprehensive             12 to 18 months    GBP 4,200
Fixed ceramic braces (both arches)       18 to 24 months    GBP 3,900
Fixed metal braces (both arches)         18 to 24 months    GBP 3,200
Bonded retainer, per arch                -                  GBP 250
Removable retainers, pair                -                  GBP 150
Replacement removable retainer, each     -                  GBP 95
* Taken off your treatment fee if you start treatment within 3 months
  of the consultation. Ravensworth Care members have it free.

Treatment fees include all your orthodontic appointments, your aligners
or brackets, and your first set of removable retainers. After treatment
you must wear retainers every night to stop your teeth moving back. We
check your retainers at your routine examinations; retainer checks
within the first 12 months after treatment are included in the fee.
<<PAGE>>
2. DENTAL IMPLANTS
An implant is a titanium post that replaces the root of a missing
tooth. After the implant is placed, it usually needs 3 to 6 months to
heal before the crown is fitted.

Treatment                                          Fee
Implant consultation with 3D (CBCT) scan           GBP 250
Single implant with porcelain crown                GBP 2,895
Bone graft, where needed                           from GBP 450
Sinus lift, where needed                           from GBP 950
Two implants to hold a lower denture               GBP 5,950
Implant review and hygiene visit, 45 minutes       GBP 109

Our implant guarantee lasts 5 years from the day your crown is fitted,
as long as you see our hygienist at least every 6 months and you don't
smoke. If an implant fails in that time, we replace it free of charge.

3. PAYING FOR ORTHODONTICS AND IMPLANTS
Ravensworth Care member discounts do not apply to these fees. We ask for
a deposit of 25% of the fee when you accept your treatment plan, and the
rest before your aligners are ordered or your implant is placed. You can
also spread the cost with finance from Dalesbridge Finance (see Paying
for treatment in instalments in our patient help centre). For example,
Clear aligners Comprehensive at GBP 4,200 with a GBP 420 deposit can be
paid in 12 monthly payments of GBP 315 at 0% APR. Finance is subject to
status, and the ap-
plication is made online.

Questions? Call your practice or Patient Support on 0808 157 0360.
""",
)

DOCS["stagepass/seller-payouts-and-fees-guide"] = (
    "StagePass Resale: seller payouts and fees",
    "StagePass, Inc. - StagePass Resale seller payouts and fees guide - revised January 12, 2026",
    """
# StagePass Resale: seller payouts and fees
For fans selling tickets on StagePass Resale in the United States.
Revised January 12, 2026. All amounts are in US dollars (USD).

1. WHAT IT COSTS TO SELL
Listing tickets on StagePass Resale is free. When a ticket sells, we
keep a seller fee of 10% of the sale price and pay you the rest. The
buyer pays a separate resale buyer fee, which does not come out of your
payout.

Sale price per ticket     Seller fee (10%)     You receive
$50.00                    $5.00                $45.00
$120.00                   $12.00               $108.00
$300.00                   $30.00               $270.00

2. WHEN AND HOW YOU GET PAID
We pay you after the event has taken place, not when your tickets
sell. This protects buyers if an event is canceled. Choose how you
want to be paid in My Account > Payouts.

Payout method           When you are paid                       Fee
Bank account (ACH)      5 to 7 business days after the event    Free
PayPal                  3 business days after the event         Free
Instant to debit card   within 1 business day of the event      USD 1.99
StagePass credit        the day after the event                 Free, plus 5% bonus*
* The bonus is added as StagePass credit. Credit can be used on any
  StagePass purchase except Resale tickets and expires 24 months after
  it is added to your account.
<<PAGE>>
3. YOUR FIRST SALES
To sell on StagePass Resale, you must have 2-step verification turned
on. For your first 3 payouts, we pay you 7 days later than the schedule
above, while we confirm that your tickets were used without problems.

4. IF SOMETHING GOES WRONG
Canceled events: the buyer is refunded and you are not paid. If we have
already paid you, we recover the amount from your payout method or
from your future payouts.
Rescheduled events: we pay you after the new date, once the event has
taken place. If the buyer asks for a refund during the refund window,
your sale is canceled and the tickets are not returned to you.
Invalid tickets: if a buyer can't get in because the tickets you sold
were already used, canceled or fake, we charge you the price the buyer
paid plus a $25 processing charge, and we may suspend your selling
privileges.

5. TAXES
We may be required by law to send you a Form 1099-K and to ask for your
taxpayer information before we can pay you. We keep payout and tax
records for 7 years after your last payout. StagePass can't give tax
advice; please ask a tax professional about your own situa-
tion.

6. QUESTIONS
Email resale@stagepass.example, Monday to Friday 9:00 to 18:00 ET.
""",
)


def main():
    _WRITER["write_all"](DOCS, HERE, "ravensworth make_pdfs.py")


if __name__ == "__main__":
    main()
